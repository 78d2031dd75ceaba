// Lag as time (docs/ADMIN-PROTOCOL.md, queue object): each queue in the snapshot carries
// oldest_ready_age_ms, how long the next message to be delivered has waited since it was
// published; it grows while the message waits and is 0 once nothing is ready.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"

using namespace cmq::test;

class tst_QueueLag : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void oldestReadyAge();
};

void tst_QueueLag::oldestReadyAge()
{
    BrokerProcess broker;
    const quint16 adminPort = freePort();
    broker.set("admin.enabled", "true");
    broker.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(adminPort));
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("declare_queue receiver_1_lag"), "Queue declared");
    QCOMPARE(receiver.request("bind receiver_1_lag CipherMQ_exchange receiver_1_lag"),
             "Queue bound");
    TestClient admin("ops-admin");
    QVERIFY(admin.connectTo(adminPort));
    const auto age = [&] {
        const QJsonArray queues = QJsonDocument::fromJson(admin.request("queues")).array();
        for (const QJsonValue &q : queues) {
            if (q["name"] == QLatin1String("receiver_1_lag"))
                return q["oldest_ready_age_ms"].toInteger(-1);
        }
        return qint64(-2);
    };
    QCOMPARE(age(), 0); // nothing ready

    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    QCOMPARE(sender.request(R"(publish CipherMQ_exchange receiver_1_lag {"message_id":"lag-1",)"
                            R"("receiver_client_id":"receiver_1","enc_session_key":"ZQ==",)"
                            R"("nonce":"bg==","ciphertext":"Yw=="})"),
             "ACK lag-1");
    const qint64 first = age();
    QVERIFY2(first >= 0, qPrintable(QString::number(first)));
    // It grows while the message waits (a condition with a deadline, not a sleep).
    QTRY_VERIFY_WITH_TIMEOUT(age() >= first + 300, 15000);

    receiver.send("consume receiver_1_lag");
    QVERIFY(receiver.readLineStartingWith("Message: lag-1").startsWith("Message: "));
    QTRY_COMPARE_WITH_TIMEOUT(age(), 0, 15000); // delivered: nothing ready any more
}

QTEST_GUILESS_MAIN(tst_QueueLag)
#include "tst_44_queue_lag.moc"
