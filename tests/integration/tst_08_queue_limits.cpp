// Queue limits and timeouts against the real broker: the reject-publish overflow policy (as
// the configured default, and per queue with queue_policy) and the ack timeout that requeues a
// delivery nobody acknowledged.

#include <memory>

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

class tst_QueueLimits : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void rejectPublish();
    void perQueuePolicy();
    void ackTimeoutRequeues();

private:
    static void declare(TestClient &receiver, const QByteArray &queue);
};

void tst_QueueLimits::declare(TestClient &receiver, const QByteArray &queue)
{
    QCOMPARE(receiver.request("declare_queue " + queue), "Queue declared");
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("bind " + queue + " CipherMQ_exchange " + queue), "Queue bound");
}

void tst_QueueLimits::rejectPublish()
{
    BrokerProcess broker;
    broker.set("performance.max_queue_size", "3");
    broker.set("performance.overflow_policy", "\"reject-publish\"");
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    declare(receiver, "receiver_1_full");
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    for (const QByteArray id : {"f-1", "f-2", "f-3"})
        QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_full " + envelope(id)),
                 "ACK " + id);
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_full " + envelope("f-4")),
             "Error: Queue 'receiver_1_full' is full (3 messages, overflow reject-publish): "
             "message f-4 rejected");
    // Nothing was evicted and the refused message was not stored: once there is room, the same
    // id is accepted.
    QCOMPARE(receiver.request("fetch receiver_1_full").left(13), "Message: f-1 ");
    QCOMPARE(receiver.request("ack f-1"), "ACK_CONFIRMED f-1");
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_full " + envelope("f-4")),
             "ACK f-4");
    for (const QByteArray id : {"f-2", "f-3", "f-4"}) {
        QCOMPARE(receiver.request("fetch receiver_1_full"), "Message: " + id + " " + envelope(id));
        QCOMPARE(receiver.request("ack " + id), "ACK_CONFIRMED " + id);
    }
    QVERIFY(broker.terminate());
}

void tst_QueueLimits::perQueuePolicy()
{
    // The configured default is drop-head with room for 100; each queue gets its own policy.
    BrokerProcess broker;
    broker.set("performance.max_queue_size", "100");
    QVERIFY2(broker.start(), broker.output().constData());
    auto receiver = std::make_unique<TestClient>("receiver_1");
    QVERIFY(receiver->connectTo(broker.port()));
    declare(*receiver, "receiver_1_strict");
    declare(*receiver, "receiver_1_short");
    QCOMPARE(receiver->request("queue_policy receiver_1_strict 2 reject-publish"),
             "Queue policy set");
    QCOMPARE(receiver->request("queue_policy receiver_1_nothere 2 drop-head"),
             "Error: Queue 'receiver_1_nothere' not found");
    auto sender = std::make_unique<TestClient>("sender_1");
    QVERIFY(sender->connectTo(broker.port()));
    const auto publish = [&](const QByteArray &queue, const QByteArray &id) {
        return sender->request("publish CipherMQ_exchange " + queue + " " + envelope(id));
    };
    QCOMPARE(publish("receiver_1_strict", "s-1"), "ACK s-1");
    QCOMPARE(publish("receiver_1_strict", "s-2"), "ACK s-2");
    QCOMPARE(publish("receiver_1_strict", "s-3"),
             "Error: Queue 'receiver_1_strict' is full (2 messages, overflow reject-publish): "
             "message s-3 rejected");
    // Lowering a drop-head limit evicts the oldest ready messages at once.
    for (const QByteArray id : {"h-1", "h-2", "h-3", "h-4"})
        QCOMPARE(publish("receiver_1_short", id), "ACK " + id);
    QCOMPARE(receiver->request("queue_policy receiver_1_short 2 drop-head"), "Queue policy set");
    QCOMPARE(receiver->request("fetch receiver_1_short"), "Message: h-3 " + envelope("h-3"));
    QCOMPARE(receiver->request("ack h-3"), "ACK_CONFIRMED h-3");

    // The policy is stored with the queue: it holds after a restart.
    receiver.reset();
    sender.reset();
    QVERIFY(broker.terminate());
    QVERIFY2(broker.start(), broker.output().constData());
    sender = std::make_unique<TestClient>("sender_1");
    QVERIFY(sender->connectTo(broker.port()));
    QCOMPARE(publish("receiver_1_strict", "s-4"),
             "Error: Queue 'receiver_1_strict' is full (2 messages, overflow reject-publish): "
             "message s-4 rejected");
    receiver = std::make_unique<TestClient>("receiver_1");
    QVERIFY(receiver->connectTo(broker.port()));
    QCOMPARE(receiver->request("fetch receiver_1_short"), "Message: h-4 " + envelope("h-4"));
    QVERIFY(broker.terminate());
}

void tst_QueueLimits::ackTimeoutRequeues()
{
    BrokerProcess broker;
    broker.set("performance.ack_timeout_sec", "1");
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient slow("receiver_1");
    QVERIFY(slow.connectTo(broker.port()));
    declare(slow, "receiver_1_slow");
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_slow " + envelope("t-1")),
             "ACK t-1");
    QCOMPARE(slow.request("fetch receiver_1_slow"), "Message: t-1 " + envelope("t-1"));
    // Never acked: after the timeout it goes back to the queue and another consumer gets it,
    // flagged as redelivered. The late ack of the first delivery is refused.
    TestClient other("receiver_1");
    QVERIFY(other.connectTo(broker.port()));
    QCOMPARE(other.request("consume receiver_1_slow"), "Subscribed to queue");
    QCOMPARE(other.readLine(10000), "Redelivered: t-1");
    QCOMPARE(other.readLine(), "Message: t-1 " + envelope("t-1"));
    QCOMPARE(slow.request("ack t-1"),
             "Error: Message t-1 is not awaiting acknowledgement from this connection");
    QCOMPARE(other.request("ack t-1"), "ACK_CONFIRMED t-1");
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_QueueLimits)
#include "tst_08_queue_limits.moc"
