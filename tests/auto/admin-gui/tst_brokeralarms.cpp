// brokerAlarms(): which alarms and expiry warnings a snapshot and the broker's certificate
// chain produce, at a chosen time.

#include <QJsonArray>
#include <QtTest>

#include "models/brokeralarms.h"
#include "testenv.h"

using cmq::admingui::BrokerAlarm;
using cmq::admingui::brokerAlarms;
using Severity = BrokerAlarm::Severity;

Q_DECLARE_METATYPE(QList<BrokerAlarm>)

namespace {

const QDateTime kNow = QDateTime(QDate(2027, 3, 1), QTime(12, 0), Qt::UTC);

QJsonObject connection(const QString &cn, const QString &serial, const QDateTime &notAfter)
{
    return QJsonObject{{"cn", cn},
                       {"certificate",
                        QJsonObject{{"serial", serial},
                                    {"not_after", notAfter.toString(Qt::ISODateWithMs)}}}};
}

} // namespace

class tst_BrokerAlarms : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void snapshotAlarms_data();
    void snapshotAlarms();
    void serverChainExpiry();
};

void tst_BrokerAlarms::snapshotAlarms_data()
{
    QTest::addColumn<QJsonObject>("snapshot");
    QTest::addColumn<QList<BrokerAlarm>>("expected");

    const QJsonObject quiet{{"memory", QJsonObject{{"alarm", false}}},
                            {"storage", QJsonObject{{"available", true}}}};
    QTest::newRow("nothing to report") << quiet << QList<BrokerAlarm>{};
    QTest::newRow("older broker without those sections") << QJsonObject{} << QList<BrokerAlarm>{};

    QJsonObject memory = quiet;
    memory["memory"] = QJsonObject{
        {"alarm", true}, {"used_bytes", qint64(70) << 20}, {"budget_bytes", qint64(64) << 20}};
    QTest::newRow("memory alarm")
        << memory
        << QList<BrokerAlarm>{{Severity::Critical,
                               "Memory alarm: the broker holds 70 MiB of its 64 MiB budget and "
                               "refuses every publish until consumers drain it to 90%."}};

    QJsonObject storage = quiet;
    storage["storage"] = QJsonObject{{"available", false}};
    QTest::newRow("storage down")
        << storage
        << QList<BrokerAlarm>{{Severity::Critical,
                               "Storage unavailable: the broker cannot reach its database; "
                               "publishes are refused until it is back."}};

    QJsonObject clients = quiet;
    clients["connections"] = QJsonArray{
        connection("svc-a", "0A", kNow.addDays(10)),  // warned
        connection("svc-a", "0A", kNow.addDays(10)),  // same certificate, second connection
        connection("svc-b", "0B", kNow.addDays(31)),  // not yet
        connection("svc-c", "0C", kNow.addDays(-2)),  // already expired (still connected)
        connection("svc-d", "0D", kNow.addSecs(3600)) // today
    };
    QTest::newRow("client certificates")
        << clients
        << QList<BrokerAlarm>{
               {Severity::Warning, "The client certificate of 'svc-a' (serial 0A) expires in 10 "
                                   "day(s), on 2027-03-11 12:00 UTC."},
               {Severity::Warning, "The client certificate of 'svc-c' (serial 0C) expired on "
                                   "2027-02-27 12:00 UTC."},
               {Severity::Warning, "The client certificate of 'svc-d' (serial 0D) expires today "
                                   "(2027-03-01 13:00 UTC)."}};

    QJsonObject both = clients;
    both["memory"] = memory["memory"];
    const QList<BrokerAlarm> bothAlarms = [&] {
        QList<BrokerAlarm> a = brokerAlarms(memory, {}, kNow);
        a += brokerAlarms(clients, {}, kNow);
        return a;
    }();
    QTest::newRow("critical first") << both << bothAlarms;
}

void tst_BrokerAlarms::snapshotAlarms()
{
    QFETCH(QJsonObject, snapshot);
    QFETCH(QList<BrokerAlarm>, expected);
    QCOMPARE(brokerAlarms(snapshot, {}, kNow), expected);
}

void tst_BrokerAlarms::serverChainExpiry()
{
    const QList<QSslCertificate> chain =
        QSslCertificate::fromPath(cmq::test::certFile("server.crt")) +
        QSslCertificate::fromPath(cmq::test::certFile("ca.crt"));
    QCOMPARE(chain.size(), 2);
    QVERIFY(brokerAlarms({}, chain, QDateTime::currentDateTimeUtc()).isEmpty());
    // Twenty days before the server certificate runs out (the CA lives longer).
    const QDateTime later = chain[0].expiryDate().addDays(-20);
    const QList<BrokerAlarm> alarms = brokerAlarms({}, chain, later);
    QCOMPARE(alarms.size(), 1);
    QCOMPARE(alarms[0].severity, Severity::Warning);
    QVERIFY2(alarms[0].text.startsWith("The broker's certificate 'localhost' expires in 20 day(s)"),
             qPrintable(alarms[0].text));
    // And when the CA is near its end too.
    QCOMPARE(brokerAlarms({}, chain, chain[1].expiryDate().addDays(-1)).size(), 2);
}

QTEST_GUILESS_MAIN(tst_BrokerAlarms)
#include "tst_brokeralarms.moc"
