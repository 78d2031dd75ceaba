// Connections that close while their `consume` of a new queue is still being declared: no
// consumer may be registered for them (it would point at a deleted connection). Many rounds of
// connect / consume <new queue> / close at once, then those queues are bound and published to:
// the broker stays up and every message goes to a live consumer. The long version, against a
// sanitizer build, is bench/stress-consume.sh.

#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"

using cmq::test::BrokerProcess;
using cmq::test::TestClient;

static QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"Y2lwaGVy"})";
}

class tst_ConsumeChurn : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void closedWhileDeclaring();
};

void tst_ConsumeChurn::closedWhileDeclaring()
{
    constexpr int Rounds = 40;
    constexpr int Parallel = 10; // connections closing together, so closes and commits interleave
    BrokerProcess broker;
    // Hundreds of connection lines would fill the output pipe this test does not keep reading.
    broker.set("logging.level", "\"warn\"");
    QVERIFY2(broker.start(), broker.output().constData());

    QList<QByteArray> queues;
    for (int round = 0; round < Rounds; ++round) {
        QList<TestClient *> clients;
        for (int i = 0; i < Parallel; ++i) {
            auto *client = new TestClient(QStringLiteral("receiver_1"));
            clients.append(client);
            const bool connected = client->connectTo(broker.port());
            QVERIFY2(connected || broker.isRunning(),
                     qPrintable(QStringLiteral("the broker died in round %1").arg(round)));
            QVERIFY2(connected, qPrintable(client->errorString()));
        }
        for (TestClient *client : std::as_const(clients)) {
            const QByteArray queue = "receiver_1_churn_" + QByteArray::number(queues.size());
            queues.append(queue);
            client->sendRaw("consume " + queue + "\n");
            client->socket().flush();
        }
        for (TestClient *client : std::as_const(clients))
            client->disconnect();
        qDeleteAll(clients);
    }
    QVERIFY2(broker.isRunning(), broker.output().right(4000).constData());

    // Bind each queue and publish one message to it.
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    for (const QByteArray &queue : std::as_const(queues)) {
        // The queue exists once its declare committed, whether or not its connection lived.
        QCOMPARE(receiver.request("declare_queue " + queue), "Queue declared");
        QCOMPARE(receiver.request("bind " + queue + " CipherMQ_exchange " + queue), "Queue bound");
    }
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    QByteArray stream;
    for (const QByteArray &queue : std::as_const(queues))
        stream += "publish CipherMQ_exchange " + queue + " " + envelope("m-" + queue) + "\n";
    sender.sendRaw(stream);
    for (const QByteArray &queue : std::as_const(queues))
        QCOMPARE(sender.readLine(30000), "ACK m-" + queue);

    // A live consumer of each queue gets its message: none went to a connection that is gone.
    int missing = 0;
    for (const QByteArray &queue : std::as_const(queues)) {
        TestClient consumer("receiver_1");
        QVERIFY(consumer.connectTo(broker.port()));
        consumer.send("consume " + queue);
        QCOMPARE(consumer.readLine(), "Subscribed to queue");
        const QByteArray line = consumer.readLine(5000);
        if (!line.startsWith("Message: m-" + queue + " ")) {
            ++missing;
            qWarning("%s: expected its message, got '%s'", queue.constData(), line.constData());
            if (!broker.isRunning())
                break;
        }
    }
    QVERIFY2(broker.isRunning(), broker.output().right(4000).constData());
    QCOMPARE(missing, 0);
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_ConsumeChurn)
#include "tst_16_consume_churn.moc"
