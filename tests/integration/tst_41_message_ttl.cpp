// Message expiry against the real broker on both storage drivers: a queue's message TTL
// (queue_policy ... <message_ttl_ms>, kept across a restart) and an envelope's own "ttl_ms";
// expired messages are removed in the background and never delivered, while the others are;
// a malformed ttl_ms is refused.

#include <memory>
#include <vector>

#include <QtTest>

#include "brokerdatabase.h"
#include "brokerprocess.h"
#include "testclient.h"
#include "testpostgres.h"

using namespace cmq::test;

namespace {

QByteArray envelope(const QByteArray &id, const QByteArray &extra = {})
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=",)"
           R"("ciphertext":"Y2lwaGVy")" +
           extra + "}";
}

void addDrivers()
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("sqlite") << "sqlite";
    QTest::newRow("postgresql") << "postgresql";
}

} // namespace

class tst_MessageTtl : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup() { m_databases.clear(); }
    void queueTtl_data() { addDrivers(); }
    void queueTtl();
    void envelopeTtl_data() { addDrivers(); }
    void envelopeTtl();
    void malformedTtlRefused();

private:
    void configure(BrokerProcess &broker, const QString &driver);
    TestDatabase *postgres() { return m_databases.empty() ? nullptr : m_databases.back().get(); }
    static void declare(TestClient &receiver, const QByteArray &queue);

    PostgresServer m_fixture;
    std::vector<std::unique_ptr<TestDatabase>> m_databases;
};

void tst_MessageTtl::initTestCase()
{
    QString error;
    m_fixture = fixturePostgres(&error);
    QVERIFY2(m_fixture.isValid(), qPrintable(error));
}

void tst_MessageTtl::configure(BrokerProcess &broker, const QString &driver)
{
    if (driver == QLatin1String("postgresql")) {
        const auto &db = m_databases.emplace_back(std::make_unique<TestDatabase>(m_fixture));
        QVERIFY2(db->isValid(), qPrintable(db->error()));
        broker.usePostgres(*db);
    }
}

void tst_MessageTtl::declare(TestClient &receiver, const QByteArray &queue)
{
    QCOMPARE(receiver.request("declare_queue " + queue), "Queue declared");
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("bind " + queue + " CipherMQ_exchange " + queue), "Queue bound");
}

void tst_MessageTtl::queueTtl()
{
    QFETCH(QString, driver);
    BrokerProcess broker;
    configure(broker, driver);
    QVERIFY2(broker.start(), broker.output().constData());
    {
        TestClient before("receiver_1");
        QVERIFY(before.connectTo(broker.port()));
        declare(before, "receiver_1_short");
        declare(before, "receiver_1_long");
        QCOMPARE(before.request("queue_policy receiver_1_short 0 drop-head 200"),
                 "Queue policy set");
    }
    // The policy is stored: a restart keeps it.
    QVERIFY(broker.terminate());
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_short " + envelope("q-1")),
             "ACK q-1");
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_long " + envelope("q-2")),
             "ACK q-2");

    // Removed in the background, never delivered: wait for its entry to go, then look.
    BrokerDatabase db(broker, postgres());
    QVERIFY2(db.isOpen(), qPrintable(db.error()));
    QCOMPARE(db.number("SELECT message_ttl_ms FROM queues WHERE name = 'receiver_1_short'"), 200);
    QTRY_COMPARE_WITH_TIMEOUT(
        db.number("SELECT COUNT(*) FROM queue_entries WHERE message_id = 'q-1'"), qint64(0), 30000);
    QCOMPARE(receiver.request("fetch receiver_1_short"), "No messages");
    QVERIFY(receiver.request("fetch receiver_1_long").startsWith("Message: q-2 "));
    QCOMPARE(receiver.request("ack q-2"), "ACK_CONFIRMED q-2");

    // 0 lifts the TTL.
    QCOMPARE(receiver.request("queue_policy receiver_1_short 0 drop-head 0"), "Queue policy set");
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_short " + envelope("q-3")),
             "ACK q-3");
    QVERIFY(receiver.request("fetch receiver_1_short").startsWith("Message: q-3 "));
    QVERIFY(broker.terminate());
}

void tst_MessageTtl::envelopeTtl()
{
    QFETCH(QString, driver);
    BrokerProcess broker;
    configure(broker, driver);
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    declare(receiver, "receiver_1_env");
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    const QByteArray shortLived = envelope("e-1", R"(,"ttl_ms":200)");
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_env " + shortLived), "ACK e-1");
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_env " + envelope("e-2")),
             "ACK e-2");

    BrokerDatabase db(broker, postgres());
    QVERIFY2(db.isOpen(), qPrintable(db.error()));
    QTRY_COMPARE_WITH_TIMEOUT(
        db.number("SELECT COUNT(*) FROM queue_entries WHERE message_id = 'e-1'"), qint64(0), 30000);
    // The envelope with the field was stored byte for byte.
    QCOMPARE(db.number("SELECT COUNT(*) FROM message_metadata WHERE message_id = 'e-1'"), 1);
    QVERIFY(receiver.request("fetch receiver_1_env").startsWith("Message: e-2 "));
    QCOMPARE(receiver.request("fetch receiver_1_env"), "No messages");

    // A long TTL is delivered as any message, the field forwarded untouched.
    const QByteArray longLived = envelope("e-3", R"(,"ttl_ms":600000)");
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_env " + longLived), "ACK e-3");
    QCOMPARE(receiver.request("fetch receiver_1_env"), "Message: e-3 " + longLived);
    QVERIFY(broker.terminate());
}

void tst_MessageTtl::malformedTtlRefused()
{
    BrokerProcess broker;
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    declare(receiver, "receiver_1_bad");
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    for (const QByteArray ttl : {R"("60")", "0", "-5", "1.5", "31536000001"}) {
        const QByteArray reply = sender.request("publish CipherMQ_exchange receiver_1_bad " +
                                                envelope("b-1", ",\"ttl_ms\":" + ttl));
        QCOMPARE(reply, "Invalid message format: field `ttl_ms` must be a whole number from 1 "
                        "to 31536000000");
    }
    QCOMPARE(receiver.request("queue_policy receiver_1_bad 0 drop-head soon"),
             "Error: Invalid message TTL: expected milliseconds from 0 to 31536000000");
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_MessageTtl)
#include "tst_41_message_ttl.moc"
