// Acknowledgements are never refused in a way that strands deliveries: under the shipped
// default [rate_limit] (100 requests/s, burst 200) a receiver that acks every delivery as fast
// as it comes, and never reads a reply, drains a 10,000-message backlog.

#include <QElapsedTimer>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"

using cmq::test::BrokerProcess;
using cmq::test::TestClient;

class tst_AckDrain : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void backlogDrainsUnderDefaultRateLimit();
};

void tst_AckDrain::backlogDrainsUnderDefaultRateLimit()
{
    constexpr int Backlog = 10000;
    BrokerProcess broker;
    broker.set("performance.max_queue_size", "100000");
    broker.set("logging.level", "\"warn\"");
    // Filled with the limits off (the publisher is not what is tested), drained with them on.
    QVERIFY2(broker.start(), broker.output().constData());
    {
        TestClient receiver("receiver_1");
        QVERIFY(receiver.connectTo(broker.port()));
        QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
        QCOMPARE(receiver.request("declare_queue receiver_1_backlog"), "Queue declared");
        QCOMPARE(receiver.request("bind receiver_1_backlog CipherMQ_exchange receiver_1_backlog"),
                 "Queue bound");
        TestClient sender("sender_1");
        QVERIFY(sender.connectTo(broker.port()));
        for (int start = 0; start < Backlog; start += 500) {
            QByteArray stream;
            for (int i = start; i < start + 500; ++i) {
                const QByteArray id = "b-" + QByteArray::number(i);
                stream +=
                    "publish CipherMQ_exchange receiver_1_backlog "
                    R"({"message_id":")" +
                    id +
                    R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"Y2lwaGVy"})"
                    "\n";
            }
            sender.sendRaw(stream);
            for (int i = start; i < start + 500; ++i)
                QCOMPARE(sender.readLine(30000), "ACK b-" + QByteArray::number(i));
        }
    }
    QVERIFY(broker.terminate());
    broker.set("rate_limit.enabled", "true"); // every other [rate_limit] key at its default
    QVERIFY2(broker.start(), broker.output().constData());

    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    receiver.send("consume receiver_1_backlog");
    QSet<QByteArray> received;
    QElapsedTimer sinceLast;
    QElapsedTimer total;
    qint64 longestPauseMs = 0;
    total.start();
    sinceLast.start();
    const QDeadlineTimer deadline(120000); // generous: a stranded receiver waits 30 minutes
    while (received.size() < Backlog && !deadline.hasExpired()) {
        const QByteArray line = receiver.readLine(int(qMax<qint64>(deadline.remainingTime(), 1)));
        if (line.isNull())
            break;
        if (!line.startsWith("Message: "))
            continue; // replies to the acks, unread as by the existing receivers
        longestPauseMs = qMax(longestPauseMs, sinceLast.restart());
        const QByteArray id = line.mid(9, line.indexOf(' ', 9) - 9);
        received.insert(id);
        receiver.send("ack " + id);
    }
    qInfo("drained %lld of %d in %lld ms; longest pause between deliveries %lld ms",
          qlonglong(received.size()), Backlog, total.elapsed(), longestPauseMs);
    QCOMPARE(received.size(), Backlog);
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_AckDrain)
#include "tst_17_ack_drain.moc"
