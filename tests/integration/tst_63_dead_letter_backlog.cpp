// Dead letters beyond a queue's window, against the real broker on both storage drivers, with a
// small window (performance.queue_window_messages): many messages dead-lettered at once (a TTL
// expiring 500) each get their record, stored in one transaction per sweep and kept through
// kill -9, and come back to a with-meta consumer with it as they are paged in; `requeue <q>`
// without a count moves every dead letter of the queue, those only in the database too.

#include <memory>
#include <vector>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QtTest>

#include "brokerdatabase.h"
#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"
#include "testpostgres.h"

using namespace cmq::test;

namespace {

const QByteArray Inbox = "both-svc_in";
const QByteArray DeadLetters = "both-svc_dlq";
constexpr int Window = 10;

QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"both-svc","enc_session_key":"ZW5j","nonce":"bm9uY2U=",)"
           R"("ciphertext":"Y2lwaGVy"})";
}

QList<QByteArray> numbered(const QByteArray &prefix, int count)
{
    QList<QByteArray> ids;
    for (int i = 0; i < count; ++i)
        ids.append(prefix + QByteArray::number(i));
    return ids;
}

void addDrivers()
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("sqlite") << "sqlite";
    QTest::newRow("postgresql") << "postgresql";
}

} // namespace

class tst_DeadLetterBacklog : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup() { m_databases.clear(); }
    void manyExpireAtOnce_data() { addDrivers(); }
    void manyExpireAtOnce();
    void requeueMovesTheBacklogToo_data() { addDrivers(); }
    void requeueMovesTheBacklogToo();

private:
    std::unique_ptr<BrokerProcess> newBroker(const QString &driver);
    std::unique_ptr<TestClient> admin();
    TestDatabase *postgres() { return m_databases.empty() ? nullptr : m_databases.back().get(); }
    // both-svc's inbox, bound to CipherMQ_exchange, dead-lettering to both-svc_dlx, which
    // routes the messages' own key to both-svc_dlq.
    static void declare(TestClient &owner);
    static void publishAll(TestClient &sender, const QList<QByteArray> &ids);

    PostgresServer m_fixture;
    std::vector<std::unique_ptr<TestDatabase>> m_databases;
    quint16 m_adminPort = 0;
};

void tst_DeadLetterBacklog::initTestCase()
{
    QString error;
    m_fixture = fixturePostgres(&error);
    QVERIFY2(m_fixture.isValid(), qPrintable(error));
}

std::unique_ptr<BrokerProcess> tst_DeadLetterBacklog::newBroker(const QString &driver)
{
    auto broker = std::make_unique<BrokerProcess>();
    if (driver == QLatin1String("postgresql")) {
        const auto &db = m_databases.emplace_back(std::make_unique<TestDatabase>(m_fixture));
        if (!db->isValid())
            qFatal("%s", qPrintable(db->error()));
        broker->usePostgres(*db);
    }
    broker->set("performance.queue_window_messages", QString::number(Window));
    m_adminPort = freePort();
    broker->set("admin.enabled", "true");
    broker->set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(m_adminPort));
    return broker;
}

std::unique_ptr<TestClient> tst_DeadLetterBacklog::admin()
{
    auto client = std::make_unique<TestClient>(QStringLiteral("ops-admin"));
    if (!client->connectTo(m_adminPort))
        qFatal("cannot connect to the admin listener: %s", qPrintable(client->errorString()));
    return client;
}

void tst_DeadLetterBacklog::declare(TestClient &owner)
{
    QCOMPARE(owner.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(owner.request("declare_exchange both-svc_dlx"), "Exchange declared");
    QCOMPARE(owner.request("declare_queue " + Inbox), "Queue declared");
    QCOMPARE(owner.request("declare_queue " + DeadLetters), "Queue declared");
    QCOMPARE(owner.request("bind " + Inbox + " CipherMQ_exchange " + Inbox), "Queue bound");
    QCOMPARE(owner.request("bind " + DeadLetters + " both-svc_dlx " + Inbox), "Queue bound");
    QCOMPARE(owner.request("queue_policy " + Inbox + " 0 drop-head dlx=both-svc_dlx"),
             "Queue policy set");
}

void tst_DeadLetterBacklog::publishAll(TestClient &sender, const QList<QByteArray> &ids)
{
    QByteArray stream;
    for (const QByteArray &id : ids)
        stream += "publish CipherMQ_exchange " + Inbox + ' ' + envelope(id) + '\n';
    sender.sendRaw(stream);
    for (const QByteArray &id : ids)
        QCOMPARE(sender.readLine(30000), "ACK " + id);
}

void tst_DeadLetterBacklog::manyExpireAtOnce()
{
    QFETCH(QString, driver);
    constexpr int Count = 500;
    const auto broker = newBroker(driver);
    QVERIFY2(broker->start(), broker->output().constData());
    auto owner = std::make_unique<TestClient>("both-svc");
    QVERIFY(owner->connectTo(broker->port()));
    declare(*owner);
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker->port()));
    const QList<QByteArray> ids = numbered("e-", Count);
    publishAll(sender, ids);
    // All of them expire together once the queue gets a TTL; nobody consumes.
    QCOMPARE(owner->request("queue_policy " + Inbox + " 0 drop-head 100"), "Queue policy set");
    BrokerDatabase db(*broker, postgres());
    QVERIFY2(db.isOpen(), qPrintable(db.error()));
    const QString recorded = QStringLiteral(
        "SELECT COUNT(*) FROM dead_letters d JOIN queue_entries e ON e.queue = d.queue AND "
        "e.message_id = d.message_id WHERE d.queue = 'both-svc_dlq' AND d.reason = 'expired' "
        "AND d.original_queue = 'both-svc_in' AND d.delivery_count = 0 AND "
        "d.dead_lettered_at IS NOT NULL");
    QTRY_COMPARE_WITH_TIMEOUT(db.number(recorded), qint64(Count), 60000);
    QCOMPARE(db.number("SELECT COUNT(*) FROM queue_entries WHERE queue = 'both-svc_in'"), 0);
    QCOMPARE(db.number("SELECT COUNT(*) FROM dead_letters"), qint64(Count));

    // kill -9: every record is still there, and each dead letter comes back with its own as the
    // queue is paged in (the window holds only Window of them at a time).
    broker->kill();
    QVERIFY2(broker->start(), broker->output().constData());
    QCOMPARE(db.number(recorded), qint64(Count));
    {
        // Recovery read the records of the window it loaded, not the whole table.
        const auto ops = admin();
        const QJsonDocument window =
            QJsonDocument::fromJson(ops->request("dead_letters " + DeadLetters + " 10000"));
        QVERIFY(window.isArray());
        QCOMPARE(window.array().size(), Window);
        for (const QJsonValue &v : window.array()) {
            QCOMPARE(v.toObject().value("reason").toString(), QStringLiteral("expired"));
            QCOMPARE(v.toObject().value("original_queue").toString(), QString::fromUtf8(Inbox));
        }
    }
    owner = std::make_unique<TestClient>("both-svc");
    QVERIFY(owner->connectTo(broker->port()));
    QCOMPARE(owner->request("qos 7"), "Qos set to 7");
    QCOMPARE(owner->request("consume " + DeadLetters + " with-meta"), "Subscribed to queue");
    QList<QByteArray> received;
    while (received.size() < Count) {
        const QByteArray metaLine = owner->readLine(30000);
        if (metaLine.startsWith("ACK_CONFIRMED "))
            continue; // the reply to an ack sent before
        QVERIFY2(metaLine.startsWith("Meta: "), metaLine.left(200).constData());
        const QByteArray rest = metaLine.mid(6);
        const QByteArray id = rest.left(rest.indexOf(' '));
        const QJsonObject facts = QJsonDocument::fromJson(rest.mid(id.size() + 1)).object();
        QCOMPARE(owner->readLine(30000), "Message: " + id + ' ' + envelope(id));
        QCOMPARE(facts.value("dead_letter_reason").toString(), QStringLiteral("expired"));
        QCOMPARE(facts.value("dead_letter_original_queue").toString(), QString::fromUtf8(Inbox));
        QCOMPARE(facts.value("dead_letter_delivery_count").toInt(-1), 0);
        QVERIFY(QDateTime::fromString(facts.value("dead_lettered_at").toString(),
                                      Qt::ISODateWithMs)
                    .isValid());
        QCOMPARE(facts.value("sender").toString(), QStringLiteral("sender_1"));
        received.append(id);
        owner->send("ack " + id);
    }
    QCOMPARE(QSet<QByteArray>(received.cbegin(), received.cend()).size(), Count);
    QCOMPARE(QSet<QByteArray>(received.cbegin(), received.cend()),
             QSet<QByteArray>(ids.cbegin(), ids.cend()));
    QTRY_COMPARE_WITH_TIMEOUT(db.number("SELECT COUNT(*) FROM queue_entries"), qint64(0), 30000);
    QVERIFY(broker->terminate());
}

void tst_DeadLetterBacklog::requeueMovesTheBacklogToo()
{
    QFETCH(QString, driver);
    constexpr int Count = 10 * Window;
    const auto broker = newBroker(driver);
    QVERIFY2(broker->start(), broker->output().constData());
    auto owner = std::make_unique<TestClient>("both-svc");
    QVERIFY(owner->connectTo(broker->port()));
    declare(*owner);
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker->port()));
    const QList<QByteArray> ids = numbered("b-", Count);
    publishAll(sender, ids);
    QCOMPARE(owner->request("queue_policy " + Inbox + " 0 drop-head 100"), "Queue policy set");
    BrokerDatabase db(*broker, postgres());
    QVERIFY2(db.isOpen(), qPrintable(db.error()));
    QTRY_COMPARE_WITH_TIMEOUT(
        db.number("SELECT COUNT(*) FROM queue_entries WHERE queue = 'both-svc_dlq'"),
        qint64(Count), 60000);
    // Back in the inbox they must not expire again.
    QCOMPARE(owner->request("queue_policy " + Inbox + " 0 drop-head ttl_ms=0"), "Queue policy set");

    // Most of them are only in the database (the window holds Window); all of them move.
    const auto ops = admin();
    QCOMPARE(ops->request("requeue " + DeadLetters),
             QByteArray(R"({"action":"requeue","ok":true,"queue":"both-svc_dlq","requeued":)") +
                 QByteArray::number(Count) + '}');
    QCOMPARE(db.number("SELECT COUNT(*) FROM queue_entries WHERE queue = 'both-svc_dlq'"), 0);
    QCOMPARE(db.number("SELECT COUNT(*) FROM dead_letters"), 0);
    QCOMPARE(db.number("SELECT COUNT(*) FROM queue_entries WHERE queue = 'both-svc_in'"),
             qint64(Count));
    QCOMPARE(ops->request("requeue " + DeadLetters),
             R"({"action":"requeue","ok":true,"queue":"both-svc_dlq","requeued":0})");

    // The inbox delivers every one of them, in their order, as plain messages.
    QCOMPARE(owner->request("qos 7"), "Qos set to 7");
    QCOMPARE(owner->request("consume " + Inbox), "Subscribed to queue");
    QList<QByteArray> received;
    while (received.size() < Count) {
        const QByteArray line = owner->readLine(30000);
        if (line.startsWith("ACK_CONFIRMED "))
            continue; // the reply to an ack sent before
        QVERIFY2(line.startsWith("Message: "), line.left(200).constData());
        const QByteArray id = line.mid(9, line.indexOf(' ', 9) - 9);
        QCOMPARE(line, "Message: " + id + ' ' + envelope(id));
        received.append(id);
        owner->send("ack " + id);
    }
    QCOMPARE(received, ids);
    // Nothing but the replies to the last acks.
    for (QByteArray line = owner->readLine(1000); !line.isNull(); line = owner->readLine(1000))
        QVERIFY2(line.startsWith("ACK_CONFIRMED "), line.constData());
    QTRY_COMPARE_WITH_TIMEOUT(db.number("SELECT COUNT(*) FROM queue_entries"), qint64(0), 30000);
    QVERIFY(broker->terminate());
}

QTEST_GUILESS_MAIN(tst_DeadLetterBacklog)
#include "tst_63_dead_letter_backlog.moc"
