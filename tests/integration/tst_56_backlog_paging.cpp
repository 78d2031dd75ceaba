// A queue's backlog lives in the database and only a window of its head in memory
// (performance.queue_window_messages), on both storage drivers: a backlog many windows long is
// delivered in publish order, each message exactly once, while it is paged in; after a restart
// (graceful or kill -9) the broker loads only the heads and pages the rest in, in order, exactly
// once before any redelivery; publishes made while a backlog is paged in queue up behind it;
// drop-head eviction and purge reach messages not in memory; resend finds a message that waits
// in the database. Start-up does not count the backlog before serving: the count runs in the
// background, the queue's figures say they are lower bounds until it lands and are exact after,
// and publishes made meanwhile queue up behind the backlog.

#include <memory>
#include <vector>

#include <QtTest>

#include "adminfixture.h"
#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"
#include "testpostgres.h"

using namespace cmq::test;

namespace {

constexpr int Window = 20;

QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=",)" +
           R"("ciphertext":")" + QByteArray(300, 'P') + R"("})";
}

QList<QByteArray> ids(const QByteArray &prefix, int from, int to)
{
    QList<QByteArray> list;
    for (int i = from; i < to; ++i)
        list.append(prefix + QByteArray::number(i));
    return list;
}

} // namespace

class tst_BacklogPaging : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void drainsInOrderWhilePaging_data();
    void drainsInOrderWhilePaging();
    void pagedInOrderAfterRestart_data();
    void pagedInOrderAfterRestart();
    void evictionAndPurgeReachTheBacklog_data();
    void evictionAndPurgeReachTheBacklog();
    void countDeferredAfterRestart_data();
    void countDeferredAfterRestart();

private:
    void configure(BrokerProcess &broker, const QString &driver);
    static void enableAdmin(BrokerProcess &broker, quint16 adminPort);
    static QJsonObject queueInfo(TestClient &admin, const QString &queue);
    static void declare(quint16 port, const QByteArray &queue);
    static void publishAll(quint16 port, const QByteArray &queue, const QList<QByteArray> &ids);
    // Consumes `count` deliveries with a small prefetch, acking each; the ids in arrival order.
    // `redelivered` gets the ids flagged as redelivered.
    static QList<QByteArray> consume(TestClient &receiver, const QByteArray &queue, int count,
                                     QList<QByteArray> *redelivered);
    // Consumes until `last` arrives (or 30 s pass without a delivery).
    static QList<QByteArray> consumeUntil(TestClient &receiver, const QByteArray &queue,
                                          const QByteArray &last, QList<QByteArray> *redelivered);
    // True when no delivery arrives within half a second.
    static bool noMoreDeliveries(TestClient &receiver);

    PostgresServer m_fixture;
    std::vector<std::unique_ptr<TestDatabase>> m_databases;
};

void tst_BacklogPaging::initTestCase()
{
    QString error;
    m_fixture = fixturePostgres(&error);
    QVERIFY2(m_fixture.isValid(), qPrintable(error));
}

void tst_BacklogPaging::configure(BrokerProcess &broker, const QString &driver)
{
    if (driver == QLatin1String("postgresql")) {
        const auto &database = m_databases.emplace_back(std::make_unique<TestDatabase>(m_fixture));
        QVERIFY2(database->isValid(), qPrintable(database->error()));
        broker.usePostgres(m_fixture.host, m_fixture.port, m_fixture.user, database->name());
    }
    broker.set("performance.max_queue_size", "100000");
    broker.set("performance.queue_window_messages", QString::number(Window));
}

void tst_BacklogPaging::enableAdmin(BrokerProcess &broker, quint16 adminPort)
{
    broker.set("admin.enabled", "true");
    broker.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(adminPort));
    broker.set("admin.allowed_cns", R"(["ops-admin"])");
}

QJsonObject tst_BacklogPaging::queueInfo(TestClient &admin, const QString &queue)
{
    return findBy(parseAdminReply(admin.request("queues")).toArray(), "name", queue);
}

void tst_BacklogPaging::declare(quint16 port, const QByteArray &queue)
{
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(port));
    QCOMPARE(receiver.request("declare_queue " + queue), "Queue declared");
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("bind " + queue + " CipherMQ_exchange " + queue), "Queue bound");
}

void tst_BacklogPaging::publishAll(quint16 port, const QByteArray &queue,
                                   const QList<QByteArray> &list)
{
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(port));
    QByteArray stream;
    for (const QByteArray &id : list)
        stream += "publish CipherMQ_exchange " + queue + " " + envelope(id) + "\n";
    sender.sendRaw(stream);
    for (const QByteArray &id : list)
        QCOMPARE(sender.readLine(30000), "ACK " + id);
}

QList<QByteArray> tst_BacklogPaging::consume(TestClient &receiver, const QByteArray &queue,
                                             int count, QList<QByteArray> *redelivered)
{
    receiver.send("qos 7"); // far below the window: deliveries keep asking for pages
    receiver.send("consume " + queue);
    QList<QByteArray> received;
    while (received.size() < count) {
        const QByteArray line = receiver.readLine(30000);
        if (line.isNull())
            break; // the caller's comparison shows what is missing
        if (line.startsWith("Redelivered: ") && redelivered)
            redelivered->append(line.mid(13));
        if (line.startsWith("Message: ")) {
            const QByteArray id = line.mid(9, line.indexOf(' ', 9) - 9);
            received.append(id);
            receiver.send("ack " + id);
        }
    }
    return received;
}

QList<QByteArray> tst_BacklogPaging::consumeUntil(TestClient &receiver, const QByteArray &queue,
                                                  const QByteArray &last,
                                                  QList<QByteArray> *redelivered)
{
    receiver.send("qos 7");
    receiver.send("consume " + queue);
    QList<QByteArray> received;
    while (received.isEmpty() || received.constLast() != last) {
        const QByteArray line = receiver.readLine(30000);
        if (line.isNull())
            break;
        if (line.startsWith("Redelivered: ") && redelivered)
            redelivered->append(line.mid(13));
        if (line.startsWith("Message: ")) {
            const QByteArray id = line.mid(9, line.indexOf(' ', 9) - 9);
            received.append(id);
            receiver.send("ack " + id);
        }
    }
    return received;
}

bool tst_BacklogPaging::noMoreDeliveries(TestClient &receiver)
{
    for (QByteArray line = receiver.readLine(500); !line.isNull(); line = receiver.readLine(500)) {
        if (line.startsWith("Message: ") || line.startsWith("Redelivered: "))
            return false;
    }
    return true;
}

void tst_BacklogPaging::drainsInOrderWhilePaging_data()
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("sqlite") << "sqlite";
    QTest::newRow("postgresql") << "postgresql";
}

void tst_BacklogPaging::drainsInOrderWhilePaging()
{
    QFETCH(QString, driver);
    BrokerProcess broker;
    configure(broker, driver);
    QVERIFY2(broker.start(), broker.output().constData());
    declare(broker.port(), "receiver_1_live");
    // Ten windows' worth with nobody consuming: most of it stays in the database.
    publishAll(broker.port(), "receiver_1_live", ids("l-", 0, 10 * Window));

    // The sender may resend one that waits in the database; another CN may not.
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    QCOMPARE(sender.request("resend l-150"), "Resend requested");
    QCOMPARE(sender.request("resend l-none"), "Message ID not found");

    // Consuming while more is published: the new messages queue up behind the backlog.
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QList<QByteArray> redelivered;
    QList<QByteArray> received = consume(receiver, "receiver_1_live", 3 * Window, &redelivered);
    publishAll(broker.port(), "receiver_1_live", ids("l-", 10 * Window, 12 * Window));
    const int rest = 12 * Window - int(received.size());
    // consume() subscribes again, which is idempotent.
    received += consume(receiver, "receiver_1_live", rest, &redelivered);
    QCOMPARE(received, ids("l-", 0, 12 * Window));
    QVERIFY2(redelivered.isEmpty(), redelivered.value(0).constData());
    QVERIFY(noMoreDeliveries(receiver));
    QVERIFY(broker.terminate());
}

void tst_BacklogPaging::pagedInOrderAfterRestart_data()
{
    QTest::addColumn<QString>("driver");
    QTest::addColumn<bool>("killed");
    QTest::newRow("sqlite, terminated") << "sqlite" << false;
    QTest::newRow("sqlite, killed") << "sqlite" << true;
    QTest::newRow("postgresql, terminated") << "postgresql" << false;
    QTest::newRow("postgresql, killed") << "postgresql" << true;
}

void tst_BacklogPaging::pagedInOrderAfterRestart()
{
    QFETCH(QString, driver);
    QFETCH(bool, killed);
    BrokerProcess broker;
    configure(broker, driver);
    QVERIFY2(broker.start(), broker.output().constData());
    declare(broker.port(), "receiver_1_restart");
    declare(broker.port(), "receiver_1_other");
    publishAll(broker.port(), "receiver_1_restart", ids("r-", 0, 15 * Window));
    publishAll(broker.port(), "receiver_1_other", ids("o-", 0, 3 * Window));

    // Part of it consumed and acknowledged before the restart.
    const int before = Window + Window / 2;
    {
        TestClient receiver("receiver_1");
        QVERIFY(receiver.connectTo(broker.port()));
        QList<QByteArray> redelivered;
        const QList<QByteArray> received =
            consume(receiver, "receiver_1_restart", before, &redelivered);
        QCOMPARE(received, ids("r-", 0, before));
        // The last ack's confirmation: every ack before it has been handled too.
        for (QByteArray line = receiver.readLine(5000); !line.isNull();
             line = receiver.readLine(5000)) {
            if (line == "ACK_CONFIRMED r-" + QByteArray::number(before - 1))
                break;
        }
    }
    if (killed)
        broker.kill();
    else
        QVERIFY(broker.terminate());
    QVERIFY2(broker.start(), broker.output().constData());

    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QList<QByteArray> redelivered;
    const QByteArray last = "r-" + QByteArray::number(15 * Window - 1);
    const QList<QByteArray> received =
        consumeUntil(receiver, "receiver_1_restart", last, &redelivered);
    QVERIFY(!received.isEmpty());
    // In order from where the acknowledged part ends, each message once. Graceful stop: the
    // acks were written, so that is `before`. kill -9: acks not yet written come back too (at
    // least once), and so can anything delivered before the kill.
    const int first = received.constFirst().mid(2).toInt();
    QCOMPARE(received, ids("r-", first, 15 * Window));
    if (!killed)
        QCOMPARE(first, before);
    QVERIFY(first <= before);
    // Only what had been delivered before the restart (acked ones whose ack was lost, and the
    // deliveries in the consumer's prefetch window when it left) is flagged, and it comes first.
    QCOMPARE(redelivered, received.mid(0, redelivered.size()));
    for (const QByteArray &id : std::as_const(redelivered))
        QVERIFY2(id.mid(2).toInt() < before + 7, id.constData());
    QList<QByteArray> other = consume(receiver, "receiver_1_other", 3 * Window, nullptr);
    QCOMPARE(other, ids("o-", 0, 3 * Window));
    QVERIFY(noMoreDeliveries(receiver));
    QVERIFY(broker.terminate());
}

void tst_BacklogPaging::evictionAndPurgeReachTheBacklog_data()
{
    drainsInOrderWhilePaging_data();
}

void tst_BacklogPaging::evictionAndPurgeReachTheBacklog()
{
    QFETCH(QString, driver);
    const quint16 adminPort = freePort();
    BrokerProcess broker;
    configure(broker, driver);
    broker.set("performance.max_queue_size", QString::number(5 * Window));
    enableAdmin(broker, adminPort);
    QVERIFY2(broker.start(), broker.output().constData());
    declare(broker.port(), "receiver_1_evict");
    // Eight windows into a queue of five: drop-head evicts the oldest three windows' worth,
    // most of them never in memory when their turn came.
    publishAll(broker.port(), "receiver_1_evict", ids("e-", 0, 8 * Window));
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QList<QByteArray> received = consume(receiver, "receiver_1_evict", 5 * Window, nullptr);
    QCOMPARE(received, ids("e-", 3 * Window, 8 * Window));
    QVERIFY(noMoreDeliveries(receiver));

    // Purge drops the backlog in the database with the window; a restart finds nothing.
    declare(broker.port(), "receiver_1_purge");
    publishAll(broker.port(), "receiver_1_purge", ids("p-", 0, 4 * Window));
    TestClient admin("ops-admin");
    QVERIFY(admin.connectTo(adminPort));
    const QByteArray purged = admin.request("purge receiver_1_purge");
    QVERIFY2(purged.contains(R"("purged":)" + QByteArray::number(4 * Window)), purged.constData());
    publishAll(broker.port(), "receiver_1_purge", ids("p-", 4 * Window, 5 * Window));
    QVERIFY(broker.terminate());
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient after("receiver_1");
    QVERIFY(after.connectTo(broker.port()));
    QCOMPARE(consume(after, "receiver_1_purge", Window, nullptr),
             ids("p-", 4 * Window, 5 * Window));
    QVERIFY(noMoreDeliveries(after));
    QVERIFY(broker.terminate());
}

void tst_BacklogPaging::countDeferredAfterRestart_data()
{
    pagedInOrderAfterRestart_data();
}

void tst_BacklogPaging::countDeferredAfterRestart()
{
    QFETCH(QString, driver);
    QFETCH(bool, killed);
    const quint16 adminPort = freePort();
    BrokerProcess broker;
    configure(broker, driver);
    enableAdmin(broker, adminPort);
    QVERIFY2(broker.start(), broker.output().constData());
    declare(broker.port(), "receiver_1_counted");
    publishAll(broker.port(), "receiver_1_counted", ids("c-", 0, 15 * Window));
    if (killed)
        broker.kill();
    else
        QVERIFY(broker.terminate());
    QVERIFY2(broker.start(), broker.output().constData());

    // Published at once after the restart, most likely while the count is still out: behind
    // the backlog whatever the timing.
    publishAll(broker.port(), "receiver_1_counted", ids("n-", 0, Window));

    // The count lands in the background; then the figures are exact.
    TestClient admin("ops-admin");
    QVERIFY(admin.connectTo(adminPort));
    QJsonObject queue;
    QDeadlineTimer deadline(30000);
    for (;;) {
        queue = queueInfo(admin, QStringLiteral("receiver_1_counted"));
        if (queue.value("counted").toInt() == 1 || deadline.hasExpired())
            break;
        QTest::qWait(20); // polling the broker's state, which has no event to wait for
    }
    QCOMPARE(queue.value("counted").toInt(), 1);
    QCOMPARE(queue.value("ready").toInt(), 16 * Window);
    QCOMPARE(queue.value("unacked").toInt(), 0);
    QCOMPARE(queue.value("bytes").toInt() > 0, true);
    // Start-up served before counting (the count's own log line), rather than counting first.
    QVERIFY2(broker.output().contains("counted in the background"), broker.output().constData());
    QVERIFY(!broker.output().contains(", heads read in"));
    // The counter's connection is closed cleanly (Qt warns when a handle to it outlives it).
    QVERIFY2(!broker.output().contains("is still in use"), broker.output().constData());

    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QList<QByteArray> redelivered;
    const QByteArray last = "n-" + QByteArray::number(Window - 1);
    const QList<QByteArray> received =
        consumeUntil(receiver, "receiver_1_counted", last, &redelivered);
    QCOMPARE(received, ids("c-", 0, 15 * Window) + ids("n-", 0, Window));
    QVERIFY2(redelivered.isEmpty(), redelivered.value(0).constData());
    QVERIFY(noMoreDeliveries(receiver));
    queue = queueInfo(admin, QStringLiteral("receiver_1_counted"));
    QCOMPARE(queue.value("ready").toInt(), 0);
    QCOMPARE(queue.value("counted").toInt(), 1);
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_BacklogPaging)
#include "tst_56_backlog_paging.moc"
