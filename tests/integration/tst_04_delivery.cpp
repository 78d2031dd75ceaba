// Delivery semantics against the real broker: round-robin between consumers, redelivery when a
// consumer disconnects, acks scoped to the delivering connection and queue, prefetch, nack, and
// the queue length limit.

#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"

using cmq::test::BrokerProcess;
using cmq::test::TestClient;

static QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id
           + R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"Y2lwaGVy"})";
}

static QByteArray idOf(const QByteArray &messageLine)
{
    // "Message: <id> <json>"
    return messageLine.split(' ').value(1);
}

class tst_Delivery : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void roundRobin();
    void redeliveryOnDisconnect();
    void ackOnlyByDeliveringConnection();
    void ackScopedToQueue();
    void prefetch();
    void nack();
    void dropHeadEviction();

private:
    TestClient *connect(const QString &identity);
    void ownQueue(const QByteArray &name, const QString &identity = QStringLiteral("receiver_1"));
    void publish(const QByteArray &routingKey, const QByteArray &id);
    BrokerProcess m_broker;
    QList<TestClient *> m_clients;
    TestClient *m_sender = nullptr;
};

void tst_Delivery::initTestCase()
{
    m_broker.set("performance.max_queue_size", "5");
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    TestClient *receiver = connect("receiver_1");
    QCOMPARE(receiver->request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    m_sender = connect("sender_1");
}

void tst_Delivery::cleanupTestCase()
{
    qDeleteAll(m_clients);
    QVERIFY(m_broker.terminate());
}

TestClient *tst_Delivery::connect(const QString &identity)
{
    auto *client = new TestClient(identity);
    m_clients.append(client);
    if (!client->connectTo(m_broker.port()))
        qFatal("cannot connect as %s: %s", qPrintable(identity), qPrintable(client->errorString()));
    return client;
}

void tst_Delivery::ownQueue(const QByteArray &name, const QString &identity)
{
    TestClient *receiver = connect(identity);
    const QByteArray prefix = identity.toUtf8() + "_";
    QCOMPARE(receiver->request("declare_queue " + prefix + name), "Queue declared");
    QCOMPARE(receiver->request("bind " + prefix + name + " CipherMQ_exchange " + prefix + name),
             "Queue bound");
}

void tst_Delivery::publish(const QByteArray &routingKey, const QByteArray &id)
{
    QCOMPARE(m_sender->request("publish CipherMQ_exchange " + routingKey + " " + envelope(id)),
             "ACK " + id);
}

void tst_Delivery::roundRobin()
{
    ownQueue("rr");
    TestClient *a = connect("receiver_1");
    TestClient *b = connect("receiver_1");
    QCOMPARE(a->request("consume receiver_1_rr"), "Subscribed to queue");
    QCOMPARE(b->request("consume receiver_1_rr"), "Subscribed to queue");
    for (int i = 0; i < 4; ++i)
        publish("receiver_1_rr", "rr-" + QByteArray::number(i));
    // Alternating, in publish order on each consumer.
    QCOMPARE(idOf(a->readLine()), "rr-0");
    QCOMPARE(idOf(b->readLine()), "rr-1");
    QCOMPARE(idOf(a->readLine()), "rr-2");
    QCOMPARE(idOf(b->readLine()), "rr-3");
    for (const QByteArray id : {"rr-0", "rr-2"})
        QCOMPARE(a->request("ack " + id), "ACK_CONFIRMED " + id);
    for (const QByteArray id : {"rr-1", "rr-3"})
        QCOMPARE(b->request("ack " + id), "ACK_CONFIRMED " + id);
    a->disconnect();
    b->disconnect();
}

void tst_Delivery::redeliveryOnDisconnect()
{
    ownQueue("rd");
    TestClient *first = connect("receiver_1");
    QCOMPARE(first->request("consume receiver_1_rd"), "Subscribed to queue");
    publish("receiver_1_rd", "rd-1");
    publish("receiver_1_rd", "rd-2");
    QCOMPARE(idOf(first->readLine()), "rd-1");
    QCOMPARE(idOf(first->readLine()), "rd-2");
    QCOMPARE(first->request("ack rd-1"), "ACK_CONFIRMED rd-1");
    first->disconnect(); // rd-2 was never acked

    TestClient *second = connect("receiver_1");
    QCOMPARE(second->request("consume receiver_1_rd"), "Subscribed to queue");
    QCOMPARE(second->readLine(), "Redelivered: rd-2");
    QCOMPARE(second->readLine(), "Message: rd-2 " + envelope("rd-2"));
    QCOMPARE(second->request("ack rd-2"), "ACK_CONFIRMED rd-2");
    QVERIFY(second->nothingWithin(200)); // rd-1 is gone for good
    second->disconnect();
}

void tst_Delivery::ackOnlyByDeliveringConnection()
{
    ownQueue("wc");
    TestClient *consumer = connect("receiver_1");
    TestClient *sameCn = connect("receiver_1");
    TestClient *other = connect("receiver_2");
    QCOMPARE(consumer->request("consume receiver_1_wc"), "Subscribed to queue");
    publish("receiver_1_wc", "wc-1");
    QCOMPARE(idOf(consumer->readLine()), "wc-1");
    const QByteArray refused =
        "Error: Message wc-1 is not awaiting acknowledgement from this connection";
    QCOMPARE(other->request("ack wc-1"), refused);
    QCOMPARE(sameCn->request("ack wc-1"), refused);
    QCOMPARE(m_sender->request("ack wc-1"), refused);
    QCOMPARE(consumer->request("ack wc-1"), "ACK_CONFIRMED wc-1");
    consumer->disconnect();
}

void tst_Delivery::ackScopedToQueue()
{
    // One message routed to two queues: acking it on one leaves the other's copy alone.
    ownQueue("sa");
    TestClient *setup = connect("receiver_1");
    QCOMPARE(setup->request("declare_queue receiver_1_sb"), "Queue declared");
    QCOMPARE(setup->request("bind receiver_1_sb CipherMQ_exchange receiver_1_sa"), "Queue bound");
    publish("receiver_1_sa", "sa-1");
    TestClient *a = connect("receiver_1");
    QCOMPARE(a->request("fetch receiver_1_sa"), "Message: sa-1 " + envelope("sa-1"));
    QCOMPARE(a->request("ack sa-1"), "ACK_CONFIRMED sa-1");
    TestClient *b = connect("receiver_1");
    QCOMPARE(b->request("fetch receiver_1_sb"), "Message: sa-1 " + envelope("sa-1"));
    QCOMPARE(b->request("ack sa-1"), "ACK_CONFIRMED sa-1");
}

void tst_Delivery::prefetch()
{
    ownQueue("pf");
    TestClient *consumer = connect("receiver_1");
    QCOMPARE(consumer->request("qos 2"), "Qos set to 2");
    QCOMPARE(consumer->request("consume receiver_1_pf"), "Subscribed to queue");
    for (int i = 0; i < 5; ++i)
        publish("receiver_1_pf", "pf-" + QByteArray::number(i));
    QCOMPARE(idOf(consumer->readLine()), "pf-0");
    QCOMPARE(idOf(consumer->readLine()), "pf-1");
    QVERIFY(consumer->nothingWithin(300)); // the window is full
    QCOMPARE(consumer->request("ack pf-0"), "ACK_CONFIRMED pf-0");
    QCOMPARE(idOf(consumer->readLine()), "pf-2"); // one slot freed, one more delivered
    QVERIFY(consumer->nothingWithin(300));
    QCOMPARE(consumer->request("qos 0"), "Qos set to 0"); // unlimited
    QCOMPARE(idOf(consumer->readLine()), "pf-3");
    QCOMPARE(idOf(consumer->readLine()), "pf-4");
    for (const QByteArray id : {"pf-1", "pf-2", "pf-3", "pf-4"})
        QCOMPARE(consumer->request("ack " + id), "ACK_CONFIRMED " + id);
    consumer->disconnect();
}

void tst_Delivery::nack()
{
    ownQueue("nk");
    TestClient *consumer = connect("receiver_1");
    publish("receiver_1_nk", "nk-1");
    publish("receiver_1_nk", "nk-2");
    QCOMPARE(consumer->request("fetch receiver_1_nk"), "Message: nk-1 " + envelope("nk-1"));
    QCOMPARE(consumer->request("nack nk-1"), "NACK_CONFIRMED nk-1"); // requeue is the default
    QCOMPARE(consumer->request("fetch receiver_1_nk"), "Redelivered: nk-1");
    QCOMPARE(consumer->readLine(), "Message: nk-1 " + envelope("nk-1"));
    QCOMPARE(consumer->request("nack nk-1 drop"), "NACK_CONFIRMED nk-1");
    QCOMPARE(consumer->request("fetch receiver_1_nk"), "Message: nk-2 " + envelope("nk-2"));
    QCOMPARE(consumer->request("nack nk-2 requeue"), "NACK_CONFIRMED nk-2");
    QCOMPARE(consumer->request("fetch receiver_1_nk"), "Redelivered: nk-2");
    QCOMPARE(consumer->readLine(), "Message: nk-2 " + envelope("nk-2"));
    QCOMPARE(consumer->request("ack nk-2"), "ACK_CONFIRMED nk-2");
    QCOMPARE(consumer->request("fetch receiver_1_nk"), "No messages"); // nk-1 was dropped
    QCOMPARE(consumer->request("nack nk-9"),
             "Error: Message nk-9 is not awaiting acknowledgement from this connection");
}

void tst_Delivery::dropHeadEviction()
{
    // max_queue_size is 5 in this broker: the sixth and seventh publish evict the oldest.
    ownQueue("ev");
    for (int i = 0; i < 7; ++i)
        publish("receiver_1_ev", "ev-" + QByteArray::number(i));
    TestClient *consumer = connect("receiver_1");
    for (int i = 2; i < 7; ++i) {
        const QByteArray id = "ev-" + QByteArray::number(i);
        QCOMPARE(consumer->request("fetch receiver_1_ev"), "Message: " + id + " " + envelope(id));
        QCOMPARE(consumer->request("ack " + id), "ACK_CONFIRMED " + id);
    }
    QCOMPARE(consumer->request("fetch receiver_1_ev"), "No messages");
}

QTEST_GUILESS_MAIN(tst_Delivery)
#include "tst_04_delivery.moc"
