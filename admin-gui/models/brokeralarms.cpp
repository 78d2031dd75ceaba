#include "models/brokeralarms.h"

#include <algorithm>

#include <QJsonArray>
#include <QSet>

namespace cmq::admingui {

namespace {

QString mebibytes(qint64 bytes)
{
    const double mib = double(bytes) / double(1 << 20);
    return QString::number(mib, 'f', mib < 10 ? 1 : 0);
}

QString expiryText(const QString &what, const QDateTime &notAfter, const QDateTime &now)
{
    const QString date = notAfter.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'"));
    if (notAfter <= now)
        return QObject::tr("%1 expired on %2.").arg(what, date);
    const qint64 days = now.daysTo(notAfter);
    return days == 0 ? QObject::tr("%1 expires today (%2).").arg(what, date)
                     : QObject::tr("%1 expires in %2 day(s), on %3.").arg(what).arg(days).arg(date);
}

bool expiresSoon(const QDateTime &notAfter, const QDateTime &now)
{
    return notAfter.isValid() && notAfter <= now.addDays(kExpiryWarningDays);
}

} // namespace

QList<BrokerAlarm> brokerAlarms(const QJsonObject &snapshot,
                                const QList<QSslCertificate> &serverChain, const QDateTime &now)
{
    using Severity = BrokerAlarm::Severity;
    QList<BrokerAlarm> alarms;
    const QJsonObject memory = snapshot.value("memory").toObject();
    if (memory.value("alarm").toBool()) {
        alarms.append({Severity::Critical,
                       QObject::tr("Memory alarm: the broker holds %1 MiB of its %2 MiB budget "
                                   "and refuses every publish until consumers drain it to 90%.")
                           .arg(mebibytes(memory.value("used_bytes").toInteger()),
                                mebibytes(memory.value("budget_bytes").toInteger()))});
    }
    const QJsonObject storage = snapshot.value("storage").toObject();
    if (storage.contains("available") && !storage.value("available").toBool()) {
        alarms.append({Severity::Critical,
                       QObject::tr("Storage unavailable: the broker cannot reach its database; "
                                   "publishes are refused until it is back.")});
    }

    for (qsizetype i = 0; i < serverChain.size(); ++i) {
        const QSslCertificate &c = serverChain[i];
        if (!expiresSoon(c.expiryDate(), now))
            continue;
        const QString name = c.subjectInfo(QSslCertificate::CommonName).value(0);
        const QString what = i == 0 ? QObject::tr("The broker's certificate '%1'").arg(name)
                                    : QObject::tr("CA certificate '%1'").arg(name);
        alarms.append({Severity::Warning, expiryText(what, c.expiryDate(), now)});
    }

    QSet<QString> seen; // serial: several connections of one client are one warning
    for (const QJsonValue &value : snapshot.value("connections").toArray()) {
        const QJsonObject connection = value.toObject();
        const QJsonObject certificate = connection.value("certificate").toObject();
        const QDateTime notAfter =
            QDateTime::fromString(certificate.value("not_after").toString(), Qt::ISODateWithMs);
        const QString serial = certificate.value("serial").toString();
        if (!expiresSoon(notAfter, now) || seen.contains(serial))
            continue;
        seen.insert(serial);
        const QString what = QObject::tr("The client certificate of '%1' (serial %2)")
                                 .arg(connection.value("cn").toString(), serial);
        alarms.append({Severity::Warning, expiryText(what, notAfter, now)});
    }

    std::stable_sort(alarms.begin(), alarms.end(), [](const BrokerAlarm &a, const BrokerAlarm &b) {
        if (a.severity != b.severity)
            return a.severity == Severity::Critical;
        return a.text < b.text;
    });
    return alarms;
}

} // namespace cmq::admingui
