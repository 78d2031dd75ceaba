// Fanout and topic exchanges against the real broker on both storage drivers: fanout copies to
// three queues, stored once (one metadata and body row, one queue entry per queue) and kept
// through kill -9 until the last copy is acked; a data-driven table of topic patterns and
// keys; who may bind to a fanout exchange and which topic patterns a receiver may bind; and a
// re-declaration with another type refused.

#include <memory>
#include <vector>

#include <QtTest>

#include "brokerdatabase.h"
#include "brokerprocess.h"
#include "testclient.h"
#include "testpostgres.h"

using namespace cmq::test;

namespace {

QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=",)"
           R"("ciphertext":"Y2lwaGVy"})";
}

void addDrivers()
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("sqlite") << "sqlite";
    QTest::newRow("postgresql") << "postgresql";
}

} // namespace

class tst_ExchangeTypes : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup() { m_databases.clear(); }
    void fanoutToThreeQueuesStoredOnce_data() { addDrivers(); }
    void fanoutToThreeQueuesStoredOnce();
    void topicTable_data() { addDrivers(); }
    void topicTable();
    void bindingRules();
    void redeclareWithAnotherType();

private:
    void configure(BrokerProcess &broker, const QString &driver);
    TestDatabase *postgres() { return m_databases.empty() ? nullptr : m_databases.back().get(); }

    PostgresServer m_fixture;
    std::vector<std::unique_ptr<TestDatabase>> m_databases;
};

void tst_ExchangeTypes::initTestCase()
{
    QString error;
    m_fixture = fixturePostgres(&error);
    QVERIFY2(m_fixture.isValid(), qPrintable(error));
}

void tst_ExchangeTypes::configure(BrokerProcess &broker, const QString &driver)
{
    if (driver == QLatin1String("postgresql")) {
        const auto &db = m_databases.emplace_back(std::make_unique<TestDatabase>(m_fixture));
        QVERIFY2(db->isValid(), qPrintable(db->error()));
        broker.usePostgres(*db);
    }
}

void tst_ExchangeTypes::fanoutToThreeQueuesStoredOnce()
{
    QFETCH(QString, driver);
    BrokerProcess broker;
    configure(broker, driver);
    QVERIFY2(broker.start(), broker.output().constData());
    const QList<QByteArray> queues = {"receiver_1_fa", "receiver_1_fb", "receiver_1_fc"};
    {
        TestClient receiver("receiver_1");
        QVERIFY(receiver.connectTo(broker.port()));
        QCOMPARE(receiver.request("declare_exchange receiver_1_news fanout"), "Exchange declared");
        for (const QByteArray &queue : queues) {
            QCOMPARE(receiver.request("declare_queue " + queue), "Queue declared");
            QCOMPARE(receiver.request("bind " + queue + " receiver_1_news receiver_1_any"),
                     "Queue bound");
        }
    }
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    // Fanout ignores the routing key.
    QCOMPARE(sender.request("publish receiver_1_news whatever " + envelope("fan-1")), "ACK fan-1");

    auto db = std::make_unique<BrokerDatabase>(broker, postgres());
    QVERIFY2(db->isOpen(), qPrintable(db->error()));
    const auto count = [&db](const QString &sql) { return int(db->number(sql)); };
    const QString where = QStringLiteral(" WHERE message_id = 'fan-1'");
    QCOMPARE(count("SELECT COUNT(*) FROM message_metadata" + where), 1);
    QCOMPARE(count("SELECT COUNT(*) FROM message_bodies" + where), 1);
    QCOMPARE(count("SELECT COUNT(*) FROM queue_entries" + where), 3);
    // Held by three queues: one shared envelope, none in the entries (migration 14).
    QCOMPARE(count("SELECT COUNT(*) FROM queue_entries" + where + " AND envelope IS NULL"), 3);

    // Two copies acked; the third survives kill -9.
    TestClient consumer("receiver_1");
    QVERIFY(consumer.connectTo(broker.port()));
    for (const QByteArray &queue : queues) {
        QCOMPARE(consumer.request("fetch " + queue).left(15), "Message: fan-1 ");
    }
    QCOMPARE(consumer.request("ack fan-1"), "ACK_CONFIRMED fan-1");
    QCOMPARE(consumer.request("ack fan-1"), "ACK_CONFIRMED fan-1");
    // Acks are written behind; wait until both are in the database, not for a while.
    QTRY_COMPARE_WITH_TIMEOUT(count("SELECT COUNT(*) FROM queue_entries" + where), 1, 30000);
    QCOMPARE(count("SELECT COUNT(*) FROM message_bodies" + where), 1);
    QCOMPARE(count("SELECT COUNT(*) FROM message_metadata" + where), 1);
    db.reset();
    consumer.disconnect();
    broker.kill();
    QVERIFY2(broker.start(), broker.output().constData());

    TestClient after("receiver_1");
    QVERIFY(after.connectTo(broker.port()));
    int stillQueued = 0;
    for (const QByteArray &queue : queues) {
        QByteArray reply = after.request("fetch " + queue);
        if (reply == "Redelivered: fan-1") // it was delivered before the kill
            reply = after.readLine();
        if (reply.startsWith("Message: fan-1 "))
            ++stillQueued;
        else
            QCOMPARE(reply, "No messages");
    }
    QCOMPARE(stillQueued, 1);
    QCOMPARE(after.request("ack fan-1"), "ACK_CONFIRMED fan-1");
    db = std::make_unique<BrokerDatabase>(broker, postgres());
    QVERIFY2(db->isOpen(), qPrintable(db->error()));
    QTRY_COMPARE_WITH_TIMEOUT(count("SELECT COUNT(*) FROM queue_entries" + where), 0, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(count("SELECT COUNT(*) FROM message_bodies" + where), 0, 30000);
    db.reset();
    QVERIFY(broker.terminate());
}

void tst_ExchangeTypes::topicTable()
{
    QFETCH(QString, driver);
    struct Row
    {
        const char *pattern; // after the receiver's prefix word
        const char *key;
        bool matches;
    };
    const Row rows[] = {
        {"orders.*.eu", "orders.new.eu", true},
        {"orders.*.eu", "orders.eu", false},
        {"orders.*.eu", "orders.a.b.eu", false},
        {"orders.#", "orders", true},
        {"orders.#", "orders.a.b.c", true},
        {"orders.#", "order.a", false},
        {"#.eu", "eu", true},
        {"#.eu", "orders.new.eu", true},
        {"#.eu", "orders.eu.us", false},
        {"a.#.c", "a.c", true},
        {"a.#.c", "a.b.b.c", true},
        {"a.#.c", "a.b.d", false},
        {"*", "x", true},
        {"*", "x.y", false},
        {"#", "x.y.z", true},
        {"a*", "ab", false},
    };
    BrokerProcess broker;
    configure(broker, driver);
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QCOMPARE(receiver.request("declare_exchange receiver_1_topics topic"), "Exchange declared");
    // Each row its own first word, so rows cannot match each other's keys.
    const auto word = [](qsizetype i) { return "receiver_1_r" + QByteArray::number(i); };
    for (qsizetype i = 0; i < qsizetype(std::size(rows)); ++i) {
        const QByteArray queue = "receiver_1_tq" + QByteArray::number(i);
        QCOMPARE(receiver.request("declare_queue " + queue), "Queue declared");
        QCOMPARE(receiver.request("bind " + queue + " receiver_1_topics " + word(i) + "." +
                                  rows[i].pattern),
                 "Queue bound");
    }
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    for (qsizetype i = 0; i < qsizetype(std::size(rows)); ++i) {
        const QByteArray id = "topic-" + QByteArray::number(i);
        const QByteArray reply = sender.request("publish receiver_1_topics " + word(i) + "." +
                                                rows[i].key + " " + envelope(id));
        const QByteArray queue = "receiver_1_tq" + QByteArray::number(i);
        const QByteArray fetched = receiver.request("fetch " + queue);
        const QByteArray what = QByteArray(rows[i].pattern) + " ~ " + rows[i].key;
        if (rows[i].matches) {
            QVERIFY2(reply == "ACK " + id, (what + ": " + reply).constData());
            QVERIFY2(fetched.startsWith("Message: " + id + " "),
                     (what + ": " + fetched).constData());
            QCOMPARE(receiver.request("ack " + id), "ACK_CONFIRMED " + id);
        } else {
            QVERIFY2(reply.startsWith("Error: "), (what + ": " + reply).constData());
            QVERIFY2(fetched == "No messages", (what + ": " + fetched).constData());
        }
    }
    QVERIFY(broker.terminate());
}

void tst_ExchangeTypes::bindingRules()
{
    BrokerProcess broker;
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient owner("receiver_1");
    TestClient other("receiver_2");
    TestClient admin("ops-admin");
    QVERIFY(owner.connectTo(broker.port()));
    QVERIFY(other.connectTo(broker.port()));
    QVERIFY(admin.connectTo(broker.port()));
    QCOMPARE(owner.request("declare_exchange receiver_1_fan fanout"), "Exchange declared");
    QCOMPARE(owner.request("declare_exchange shared_topics topic"), "Exchange declared");
    QCOMPARE(owner.request("declare_queue receiver_1_q"), "Queue declared");
    QCOMPARE(other.request("declare_queue receiver_2_q"), "Queue declared");

    // Fanout: the creator binds, and an admin for it; nobody else.
    QCOMPARE(owner.request("bind receiver_1_q receiver_1_fan receiver_1"), "Queue bound");
    QCOMPARE(other.request("bind receiver_2_q receiver_1_fan receiver_2"),
             "Error: Permission denied: fanout exchange 'receiver_1_fan' takes bindings from its "
             "creator receiver_1 only");
    QCOMPARE(admin.request("bind receiver_2_q receiver_1_fan receiver_2"), "Queue bound");
    // Re-declaring does not make another receiver the creator.
    QCOMPARE(other.request("declare_exchange receiver_1_fan fanout"), "Exchange declared");
    QVERIFY(other.request("bind receiver_2_q receiver_1_fan receiver_2_x")
                .startsWith("Error: Permission denied: fanout"));

    // Topic: any receiver, with patterns inside its own namespace.
    QCOMPARE(other.request("bind receiver_2_q shared_topics receiver_2_orders.*.eu"),
             "Queue bound");
    QCOMPARE(other.request("bind receiver_2_q shared_topics receiver_2.#"),
             "Error: Permission denied: routing key 'receiver_2.#' must be receiver_2 or start "
             "with receiver_2_");
    for (const QByteArray key : {"#", "*.x", "*", "receiver_1_orders.#", "#.receiver_2_x"}) {
        const QByteArray reply = other.request("bind receiver_2_q shared_topics " + key);
        QVERIFY2(reply.startsWith("Error: Permission denied: routing key"), reply.constData());
    }
    QCOMPARE(admin.request("bind receiver_2_q shared_topics #"), "Queue bound");

    // Only the types there are.
    QCOMPARE(owner.request("declare_exchange receiver_1_h headers"),
             "Error: Invalid exchange type: expected direct, fanout or topic");
    // A malformed line to a sender too, answered before the ACL's command check (as ever).
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    QCOMPARE(sender.request("declare_exchange receiver_1_h topic fanout"),
             "Error: Invalid exchange type: expected direct, fanout or topic");
    QVERIFY(broker.terminate());
}

void tst_ExchangeTypes::redeclareWithAnotherType()
{
    BrokerProcess broker;
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange direct"), "Exchange declared");
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange topic"),
             "Error: Exchange 'CipherMQ_exchange' exists with type direct, not topic");
    QCOMPARE(receiver.request("declare_exchange receiver_1_t topic"), "Exchange declared");
    QCOMPARE(receiver.request("declare_exchange receiver_1_t"),
             "Error: Exchange 'receiver_1_t' exists with type topic, not direct");
    QCOMPARE(receiver.request("declare_exchange receiver_1_t topic"), "Exchange declared");
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_ExchangeTypes)
#include "tst_40_exchange_types.moc"
