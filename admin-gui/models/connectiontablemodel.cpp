#include "models/connectiontablemodel.h"

#include <QBrush>
#include <QColor>
#include <QJsonArray>

#include "models/connectionfields.h"
#include "models/palettecolors.h"

namespace cmq::admingui {

ConnectionTableModel::ConnectionTableModel(QObject *parent) : JsonTableModel(parent)
{
}

QString ConnectionTableModel::keyOf(const QJsonObject &row) const
{
    return QString::number(row.value(u"id").toInteger());
}

QStringList ConnectionTableModel::headers() const
{
    return {tr("Id"),       tr("Listener"),        tr("CN"),          tr("Roles"),
            tr("Address"),  tr("Connected since"), tr("Msgs in"),     tr("Msgs out"),
            tr("Bytes in"), tr("Bytes out"),       tr("Cert expiry"), tr("Subject"),
            tr("Issuer"),   tr("Serial")};
}

QVariant ConnectionTableModel::cell(const QJsonObject &row, int column) const
{
    const QJsonObject certificate = row.value(u"certificate").toObject();
    switch (column) {
    case Id:
        return row.value(u"id").toDouble();
    case Listener:
        return row.value(u"listener").toString();
    case Cn:
        return row.value(u"cn").toString();
    case Roles: {
        QStringList roles;
        for (const QJsonValue &role : row.value(u"roles").toArray())
            roles.append(role.toString());
        return roles.join(", ");
    }
    case Address:
        return connectionAddress(row);
    case ConnectedSince:
        return connectedSince(row);
    case Subject:
        return certificate.value(u"subject").toString();
    case Issuer:
        return certificate.value(u"issuer").toString();
    case Serial:
        return certificate.value(u"serial").toString();
    case Expiry:
        return certificate.value(u"not_after").toString().left(10);
    case MessagesIn:
        return row.value(u"messages_in").toDouble();
    case MessagesOut:
        return row.value(u"messages_out").toDouble();
    case BytesIn:
        return row.value(u"bytes_in").toDouble();
    case BytesOut:
        return row.value(u"bytes_out").toDouble();
    default:
        return {};
    }
}

bool ConnectionTableModel::expiresSoon(const QJsonObject &row) const
{
    const QDateTime notAfter = QDateTime::fromString(
        row.value(u"certificate").toObject().value(u"not_after").toString(), Qt::ISODateWithMs);
    if (!notAfter.isValid())
        return false;
    const QDateTime now = m_now.isValid() ? m_now : QDateTime::currentDateTimeUtc();
    return notAfter < now.addDays(ExpiryWarningDays);
}

bool ConnectionTableModel::expiresSoon(int row) const
{
    return expiresSoon(rowObject(row));
}

QVariant ConnectionTableModel::extraData(const QJsonObject &row, int column, int role) const
{
    if (!expiresSoon(row))
        return {};
    if (role == Qt::BackgroundRole)
        return QBrush(warningBackground(column == Expiry));
    if (role == Qt::ToolTipRole)
        return tr("The client certificate expires within %1 days").arg(ExpiryWarningDays);
    return {};
}

} // namespace cmq::admingui
