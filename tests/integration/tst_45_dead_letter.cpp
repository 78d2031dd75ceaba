// Dead-lettering against the real broker on both storage drivers (docs/PROTOCOL.md,
// "Dead-lettering"): each reason (nack drop, expiry, drop-head overflow when asked, the
// delivery limit) moves the message, envelope byte for byte, to the dead-letter queue with its
// record in the database; the admin view shows the records, they survive kill -9, and the
// admin's requeue sends the messages back (audited). A kill -9 while dead-letter moves are
// being written leaves every message in exactly one queue. The record's four facts are the same
// in the admin view and in a consumer's Meta line. Who may name a dead-letter exchange.

#include <memory>
#include <vector>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
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

QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"both-svc","enc_session_key":"ZW5j","nonce":"bm9uY2U=",)"
           R"("ciphertext":"Y2lwaGVy"})";
}

void addDrivers()
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("sqlite") << "sqlite";
    QTest::newRow("postgresql") << "postgresql";
}

QJsonArray array(const QByteArray &line)
{
    const QJsonDocument doc = QJsonDocument::fromJson(line);
    if (!doc.isArray())
        qWarning("not a JSON array: %s", line.left(300).constData());
    return doc.array();
}

// "<message_id> <reason> <original_queue> <delivery_count>" per dead letter.
QStringList described(const QJsonArray &deadLetters)
{
    QStringList out;
    for (const QJsonValue &v : deadLetters) {
        const QJsonObject o = v.toObject();
        out << QStringLiteral("%1 %2 %3 %4")
                   .arg(o.value("message_id").toString(), o.value("reason").toString(),
                        o.value("original_queue").toString())
                   .arg(o.value("delivery_count").toInt());
    }
    return out;
}

} // namespace

class tst_DeadLetter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup() { m_databases.clear(); }
    void eachReasonAndRequeue_data() { addDrivers(); }
    void eachReasonAndRequeue();
    void recordInAdminAndMeta_data() { addDrivers(); }
    void recordInAdminAndMeta();
    void killDuringMoves_data() { addDrivers(); }
    void killDuringMoves();
    void whoMayNameADeadLetterExchange();

private:
    std::unique_ptr<BrokerProcess> newBroker(const QString &driver);
    std::unique_ptr<TestClient> admin();
    TestDatabase *postgres() { return m_databases.empty() ? nullptr : m_databases.back().get(); }
    // both-svc's inbox, bound to CipherMQ_exchange, dead-lettering to both-svc_dlx, which
    // routes the messages' own key to both-svc_dlq.
    static void declare(TestClient &owner);

    PostgresServer m_fixture;
    std::vector<std::unique_ptr<TestDatabase>> m_databases;
    quint16 m_adminPort = 0;
};

void tst_DeadLetter::initTestCase()
{
    QString error;
    m_fixture = fixturePostgres(&error);
    QVERIFY2(m_fixture.isValid(), qPrintable(error));
}

std::unique_ptr<BrokerProcess> tst_DeadLetter::newBroker(const QString &driver)
{
    auto broker = std::make_unique<BrokerProcess>();
    if (driver == QLatin1String("postgresql")) {
        const auto &db = m_databases.emplace_back(std::make_unique<TestDatabase>(m_fixture));
        if (!db->isValid())
            qFatal("%s", qPrintable(db->error()));
        broker->usePostgres(*db);
    }
    m_adminPort = freePort();
    broker->set("admin.enabled", "true");
    broker->set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(m_adminPort));
    return broker;
}

std::unique_ptr<TestClient> tst_DeadLetter::admin()
{
    auto client = std::make_unique<TestClient>(QStringLiteral("ops-admin"));
    if (!client->connectTo(m_adminPort))
        qFatal("cannot connect to the admin listener: %s", qPrintable(client->errorString()));
    return client;
}

void tst_DeadLetter::declare(TestClient &owner)
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

void tst_DeadLetter::eachReasonAndRequeue()
{
    QFETCH(QString, driver);
    const auto broker = newBroker(driver);
    QVERIFY2(broker->start(), broker->output().constData());
    auto owner = std::make_unique<TestClient>("both-svc");
    QVERIFY(owner->connectTo(broker->port()));
    declare(*owner);
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker->port()));
    const auto publish = [&](const QByteArray &id) {
        QCOMPARE(sender.request("publish CipherMQ_exchange " + Inbox + ' ' + envelope(id)),
                 "ACK " + id);
    };
    BrokerDatabase db(*broker, postgres());
    QVERIFY2(db.isOpen(), qPrintable(db.error()));
    const auto deadLettered = [&](const QByteArray &id, const char *reason) {
        return db.number(QStringLiteral("SELECT COUNT(*) FROM dead_letters d JOIN queue_entries "
                                        "e ON e.queue = d.queue AND e.message_id = d.message_id "
                                        "WHERE d.message_id = '%1' AND d.queue = '%2' AND "
                                        "d.reason = '%3' AND d.original_queue = '%4'")
                             .arg(QString::fromUtf8(id), QString::fromUtf8(DeadLetters),
                                  QLatin1StringView(reason), QString::fromUtf8(Inbox)));
    };

    // nack ... drop: rejected.
    publish("r-1");
    QCOMPARE(owner->request("fetch " + Inbox), "Message: r-1 " + envelope("r-1"));
    QCOMPARE(owner->request("nack r-1 drop"), "NACK_CONFIRMED r-1");
    QTRY_COMPARE_WITH_TIMEOUT(deadLettered("r-1", "rejected"), qint64(1), 30000);

    // Past the queue's TTL (the positional form keeps the dead-letter exchange): expired.
    QCOMPARE(owner->request("queue_policy " + Inbox + " 0 drop-head 200"), "Queue policy set");
    publish("x-1");
    QTRY_COMPARE_WITH_TIMEOUT(deadLettered("x-1", "expired"), qint64(1), 30000);
    QCOMPARE(owner->request("queue_policy " + Inbox + " 0 drop-head ttl_ms=0"), "Queue policy set");

    // Evicted by drop-head, dead-lettered only once the queue asks for it: overflow.
    QCOMPARE(owner->request("queue_policy " + Inbox + " 1 drop-head dead_letter_overflow=on"),
             "Queue policy set");
    publish("o-1");
    publish("o-2");
    QTRY_COMPARE_WITH_TIMEOUT(deadLettered("o-1", "overflow"), qint64(1), 30000);
    QCOMPARE(owner->request("fetch " + Inbox), "Message: o-2 " + envelope("o-2"));
    QCOMPARE(owner->request("ack o-2"), "ACK_CONFIRMED o-2");

    // Delivered twice without an ack: delivery_limit, with its count.
    QCOMPARE(owner->request("queue_policy " + Inbox +
                            " 0 drop-head delivery_limit=2 dead_letter_overflow=off"),
             "Queue policy set");
    publish("p-1");
    QCOMPARE(owner->request("fetch " + Inbox), "Message: p-1 " + envelope("p-1"));
    QCOMPARE(owner->request("nack p-1 requeue"), "NACK_CONFIRMED p-1");
    owner->send("fetch " + Inbox);
    QCOMPARE(owner->readLine(), "Redelivered: p-1");
    QCOMPARE(owner->readLine(), "Message: p-1 " + envelope("p-1"));
    QCOMPARE(owner->request("nack p-1 requeue"), "NACK_CONFIRMED p-1");
    QTRY_COMPARE_WITH_TIMEOUT(deadLettered("p-1", "delivery_limit"), qint64(1), 30000);
    QCOMPARE(db.number("SELECT delivery_count FROM dead_letters WHERE message_id = 'p-1'"), 2);
    QCOMPARE(db.number(QStringLiteral("SELECT COUNT(*) FROM queue_entries WHERE queue = '%1'")
                           .arg(QString::fromUtf8(Inbox))),
             0);

    // What admins see: the records, the queue's settings, the counters.
    const QStringList expected{"r-1 rejected both-svc_in 1", "x-1 expired both-svc_in 0",
                               "o-1 overflow both-svc_in 0", "p-1 delivery_limit both-svc_in 2"};
    {
        const auto ops = admin();
        QCOMPARE(described(array(ops->request("dead_letters " + DeadLetters))), expected);
        const QJsonArray queues = array(ops->request("queues"));
        bool seen = false;
        for (const QJsonValue &v : queues) {
            const QJsonObject q = v.toObject();
            if (q.value("name").toString() != QString::fromUtf8(Inbox))
                continue;
            seen = true;
            QCOMPARE(q.value("dead_letter_exchange").toString(), "both-svc_dlx");
            QCOMPARE(q.value("delivery_limit").toInt(), 2);
            QCOMPARE(q.value("dead_letter_overflow").toBool(), false);
            QCOMPARE(q.value("dead_lettered").toInt(), 4);
        }
        QVERIFY(seen);
    }
    {
        const auto scraper = admin();
        scraper->send("metrics");
        for (const char *reason : {"rejected", "expired", "overflow", "delivery_limit"}) {
            const QByteArray sample =
                "ciphermq_dead_lettered_total{reason=\"" + QByteArray(reason) + "\"}";
            QCOMPARE(scraper->readLineStartingWith(sample), sample + " 1");
        }
    }

    // kill -9: the dead letters and their records are durable.
    broker->kill();
    QVERIFY2(broker->start(), broker->output().constData());
    owner = std::make_unique<TestClient>("both-svc");
    QVERIFY(owner->connectTo(broker->port()));
    const auto ops = admin();
    QCOMPARE(described(array(ops->request("dead_letters " + DeadLetters))), expected);

    // Requeue: one, then the rest, back to the inbox as new messages; audited.
    QCOMPARE(ops->request("requeue " + DeadLetters + " 1"),
             R"({"action":"requeue","ok":true,"queue":"both-svc_dlq","requeued":1})");
    QCOMPARE(ops->request("requeue " + DeadLetters),
             R"({"action":"requeue","ok":true,"queue":"both-svc_dlq","requeued":3})");
    QCOMPARE(db.number("SELECT COUNT(*) FROM queue_entries WHERE queue = 'both-svc_dlq'"), 0);
    QCOMPARE(db.number("SELECT COUNT(*) FROM dead_letters"), 0);
    QCOMPARE(db.number("SELECT COUNT(*) FROM queue_entries WHERE queue = 'both-svc_in'"), 4);
    for (const QByteArray id : {"r-1", "x-1", "o-1", "p-1"}) {
        QCOMPARE(owner->request("fetch " + Inbox), "Message: " + id + ' ' + envelope(id));
        QCOMPARE(owner->request("ack " + id), "ACK_CONFIRMED " + id);
    }
    const QJsonArray audit = array(ops->request("audit"));
    QStringList actions;
    for (const QJsonValue &v : audit) {
        const QJsonObject e = v.toObject();
        actions << e.value("action").toString() + ' ' + e.value("target").toString() + ' ' +
                       e.value("detail").toString();
    }
    QCOMPARE(actions,
             (QStringList{"requeue both-svc_dlq requeued=1", "requeue both-svc_dlq requeued=3"}));
    QVERIFY(broker->terminate());
}

void tst_DeadLetter::recordInAdminAndMeta()
{
    // All four facts of a record (reason, original queue, time, delivery count) are stored and
    // shown the same to an admin and to a consumer that asked for metadata, before and after
    // kill -9.
    QFETCH(QString, driver);
    const auto broker = newBroker(driver);
    QVERIFY2(broker->start(), broker->output().constData());
    auto owner = std::make_unique<TestClient>("both-svc");
    QVERIFY(owner->connectTo(broker->port()));
    declare(*owner);
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker->port()));
    QCOMPARE(sender.request("publish CipherMQ_exchange " + Inbox + ' ' + envelope("m-1")),
             "ACK m-1");
    QCOMPARE(owner->request("fetch " + Inbox), "Message: m-1 " + envelope("m-1"));
    QCOMPARE(owner->request("nack m-1 requeue"), "NACK_CONFIRMED m-1");
    owner->send("fetch " + Inbox);
    QCOMPARE(owner->readLines(2),
             (QList<QByteArray>{"Redelivered: m-1", "Message: m-1 " + envelope("m-1")}));
    const QDateTime before = QDateTime::currentDateTimeUtc().addMSecs(-1);
    QCOMPARE(owner->request("nack m-1 drop"), "NACK_CONFIRMED m-1");
    BrokerDatabase db(*broker, postgres());
    QVERIFY2(db.isOpen(), qPrintable(db.error()));
    QTRY_COMPARE_WITH_TIMEOUT(
        db.number("SELECT COUNT(*) FROM dead_letters WHERE message_id = 'm-1' AND queue = "
                  "'both-svc_dlq' AND reason = 'rejected' AND original_queue = 'both-svc_in' "
                  "AND delivery_count = 2 AND dead_lettered_at IS NOT NULL"),
        qint64(1), 30000);
    const QDateTime after = QDateTime::currentDateTimeUtc().addMSecs(1);

    QString at;
    {
        const auto ops = admin();
        const QJsonArray records = array(ops->request("dead_letters " + DeadLetters));
        QCOMPARE(described(records), QStringList{"m-1 rejected both-svc_in 2"});
        at = records.first().toObject().value("dead_lettered_at").toString();
        const QDateTime when = QDateTime::fromString(at, Qt::ISODateWithMs);
        QVERIFY2(when >= before && when <= after, qPrintable(at));
    }
    const auto checkMeta = [&](bool redelivered) {
        owner->send("fetch " + DeadLetters + " with-meta");
        const QByteArray metaLine = owner->readLine();
        QVERIFY2(metaLine.startsWith("Meta: m-1 "), metaLine.constData());
        const QJsonObject facts = QJsonDocument::fromJson(metaLine.mid(10)).object();
        QCOMPARE(owner->readLine(), "Message: m-1 " + envelope("m-1"));
        QCOMPARE(facts.value("sender").toString(), QStringLiteral("sender_1"));
        QCOMPARE(facts.value("redelivered").toBool(), redelivered);
        QCOMPARE(facts.value("dead_letter_reason").toString(), QStringLiteral("rejected"));
        QCOMPARE(facts.value("dead_letter_original_queue").toString(),
                 QString::fromUtf8(Inbox));
        QCOMPARE(facts.value("dead_lettered_at").toString(), at);
        QCOMPARE(facts.value("dead_letter_delivery_count").toInt(), 2);
    };
    checkMeta(false);
    QCOMPARE(owner->request("nack m-1 requeue"), "NACK_CONFIRMED m-1");
    QTRY_COMPARE_WITH_TIMEOUT(
        db.number("SELECT COUNT(*) FROM queue_entries WHERE message_id = 'm-1' AND delivered"),
        qint64(1), 30000);

    // The record comes back from the database as it was stored.
    broker->kill();
    QVERIFY2(broker->start(), broker->output().constData());
    owner = std::make_unique<TestClient>("both-svc");
    QVERIFY(owner->connectTo(broker->port()));
    {
        const auto ops = admin();
        const QJsonArray records = array(ops->request("dead_letters " + DeadLetters));
        QCOMPARE(described(records), QStringList{"m-1 rejected both-svc_in 2"});
        QCOMPARE(records.first().toObject().value("dead_lettered_at").toString(), at);
    }
    checkMeta(true);
    QCOMPARE(owner->request("ack m-1"), "ACK_CONFIRMED m-1");
    QVERIFY(broker->terminate());
}

void tst_DeadLetter::killDuringMoves()
{
    QFETCH(QString, driver);
    const auto broker = newBroker(driver);
    QVERIFY2(broker->start(), broker->output().constData());
    TestClient owner("both-svc");
    QVERIFY(owner.connectTo(broker->port()));
    declare(owner);
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker->port()));
    constexpr int Messages = 40;
    for (int i = 0; i < Messages; ++i) {
        const QByteArray id = "k-" + QByteArray::number(i);
        QCOMPARE(sender.request("publish CipherMQ_exchange " + Inbox + ' ' + envelope(id)),
                 "ACK " + id);
    }
    for (int i = 0; i < Messages; ++i)
        QVERIFY(owner.request("fetch " + Inbox).startsWith("Message: k-"));
    // Every nack starts a move; the broker dies while they are being written.
    for (int i = 0; i < Messages; ++i)
        owner.send("nack k-" + QByteArray::number(i) + " drop");
    QCOMPARE(owner.readLine(), "NACK_CONFIRMED k-0");
    {
        // Kill once some moves have committed, so both sides of a move are tried.
        BrokerDatabase live(*broker, postgres());
        QTRY_VERIFY_WITH_TIMEOUT(
            live.number("SELECT COUNT(*) FROM queue_entries WHERE queue = 'both-svc_dlq'") >= 5,
            30000);
    }
    broker->kill();

    QVERIFY2(broker->start(), broker->output().constData());
    BrokerDatabase db(*broker, postgres());
    QVERIFY2(db.isOpen(), qPrintable(db.error()));
    // Each message in exactly one queue; each one in the dead-letter queue with its record.
    QCOMPARE(db.number("SELECT COUNT(*) FROM queue_entries WHERE message_id LIKE 'k-%'"), Messages);
    QCOMPARE(db.number("SELECT COUNT(DISTINCT message_id) FROM queue_entries "
                       "WHERE message_id LIKE 'k-%'"),
             Messages);
    const qint64 moved = db.number("SELECT COUNT(*) FROM queue_entries WHERE queue = "
                                   "'both-svc_dlq'");
    qInfo("%lld of %d messages were dead-lettered before the kill", moved, Messages);
    QCOMPARE(db.number("SELECT COUNT(*) FROM dead_letters d JOIN queue_entries e ON "
                       "e.queue = d.queue AND e.message_id = d.message_id "
                       "WHERE d.reason = 'rejected'"),
             moved);
    // Each envelope where its entry reads it: a moved entry handed it to message_bodies, one
    // still in the inbox carries its own (migration 14).
    QCOMPARE(db.number("SELECT COUNT(*) FROM message_bodies WHERE message_id LIKE 'k-%'"), moved);
    QCOMPARE(db.number("SELECT COUNT(*) FROM queue_entries WHERE message_id LIKE 'k-%' "
                       "AND envelope IS NOT NULL AND queue <> 'both-svc_dlq'"),
             Messages - moved);
    // And the broker serves them from where they are.
    TestClient again("both-svc");
    QVERIFY(again.connectTo(broker->port()));
    const auto ops = admin();
    QCOMPARE(
        qint64(described(array(ops->request("dead_letters " + DeadLetters + " 10000"))).size()),
        moved);
    int fetched = 0;
    for (const QByteArray &queue : {Inbox, DeadLetters}) {
        for (;;) {
            again.send("fetch " + queue);
            QByteArray line = again.readLine();
            if (line.startsWith("Redelivered: "))
                line = again.readLine();
            if (line == "No messages")
                break;
            QVERIFY2(line.startsWith("Message: k-"), line.constData());
            const QByteArray id = line.mid(9, line.indexOf(' ', 9) - 9);
            QCOMPARE(line, "Message: " + id + ' ' + envelope(id));
            QCOMPARE(again.request("ack " + id), "ACK_CONFIRMED " + id);
            ++fetched;
        }
    }
    QCOMPARE(fetched, Messages);
    QVERIFY(broker->terminate());
}

void tst_DeadLetter::whoMayNameADeadLetterExchange()
{
    const auto broker = newBroker(QStringLiteral("sqlite"));
    QVERIFY2(broker->start(), broker->output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker->port()));
    QCOMPARE(receiver.request("declare_exchange receiver_1_dlx"), "Exchange declared");
    QCOMPARE(receiver.request("declare_queue receiver_1_in"), "Queue declared");
    // A receiver that may not publish names no dead-letter exchange; the rest it may set.
    QCOMPARE(receiver.request("queue_policy receiver_1_in 0 drop-head dlx=receiver_1_dlx"),
             "Error: Permission denied: a dead-letter exchange publishes for the queue's owner, "
             "and role receiver may not publish");
    QCOMPARE(receiver.request("queue_policy receiver_1_in 0 drop-head dlx= delivery_limit=3"),
             "Queue policy set");
    // Nor on someone else's queue, whatever it names.
    TestClient both("both-svc");
    QVERIFY(both.connectTo(broker->port()));
    QVERIFY(both.request("queue_policy receiver_1_in 0 drop-head dlx=receiver_1_dlx")
                .startsWith("Error: Permission denied"));
    // An exchange that does not exist; bad options.
    QCOMPARE(both.request("declare_queue both-svc_x"), "Queue declared");
    QCOMPARE(both.request("queue_policy both-svc_x 0 drop-head dlx=nowhere"),
             "Error: Exchange 'nowhere' not found");
    QCOMPARE(both.request("queue_policy both-svc_x 0 drop-head colour=red"),
             "Error: Invalid queue policy option: expected ttl_ms, dlx, dlx_key, delivery_limit "
             "or dead_letter_overflow");
    QCOMPARE(both.request("queue_policy both-svc_x 0 drop-head 5 ttl_ms=5"),
             "Error: Invalid queue policy option: each may be given once");
    QCOMPARE(both.request("queue_policy both-svc_x 0 drop-head delivery_limit=-1"),
             "Error: Invalid delivery limit: expected a whole number from 0 to 1000000");
    // An admin may set one on a receiver's queue (provisioning it).
    const auto ops = admin();
    TestClient dataAdmin("ops-admin");
    QVERIFY(dataAdmin.connectTo(broker->port()));
    QCOMPARE(dataAdmin.request("queue_policy receiver_1_in 0 drop-head dlx=receiver_1_dlx"),
             "Queue policy set");
    // Requeue is an action: unknown queues are errors.
    QCOMPARE(ops->request("requeue nobody_q"), "Error: Queue 'nobody_q' not found");
    QVERIFY(broker->terminate());
}

QTEST_GUILESS_MAIN(tst_DeadLetter)
#include "tst_45_dead_letter.moc"
