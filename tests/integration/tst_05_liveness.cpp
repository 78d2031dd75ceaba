// Connection liveness against the real broker: the opt-in heartbeat (pings while the client is
// silent, pongs keep it alive, silence past the timeout closes it), the idle timeout for
// clients that never asked for heartbeats (never for a consumer), and the graceful shutdown
// notice. Timed behaviour is awaited with deadlines; the timeouts are set to a few seconds.

#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testpostgres.h"

using cmq::test::BrokerProcess;
using cmq::test::TestClient;

namespace {

constexpr int kIdleTimeoutSec = 2;
constexpr int kHeartbeatTimeoutSec = 3;
const QByteArray kIdleClose = "Error: Idle timeout: no traffic for 2 s; closing the connection";
const QByteArray kHeartbeatClose = "Error: Heartbeat timeout: closing the connection";
const QByteArray kShutdownNotice = "Server shutting down";

QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"Y2lwaGVy"})";
}

} // namespace

class tst_Liveness : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup();
    void cleanupTestCase();
    void heartbeatAnsweredKeepsConnection();
    void heartbeatSilenceCloses();
    void pingNotHeldBehindSlowCommit();
    void idleClientClosed();
    void consumerNeverIdleClosed();
    void gracefulShutdown();

private:
    TestClient *connect(const QString &identity, BrokerProcess &broker);
    TestClient *connect(const QString &identity) { return connect(identity, m_broker); }
    // receiver_1_<name>, bound on CipherMQ_exchange with routing key receiver_1_<name>.
    void declareQueue(TestClient *receiver, const QByteArray &name);
    BrokerProcess m_broker;
    QList<TestClient *> m_clients;
};

void tst_Liveness::initTestCase()
{
    m_broker.set("performance.idle_timeout_sec", QString::number(kIdleTimeoutSec));
    m_broker.set("performance.heartbeat_timeout", QString::number(kHeartbeatTimeoutSec));
    QVERIFY2(m_broker.start(), m_broker.output().constData());
}

void tst_Liveness::cleanup()
{
    qDeleteAll(m_clients);
    m_clients.clear();
}

void tst_Liveness::cleanupTestCase()
{
    QVERIFY(m_broker.terminate());
    QCOMPARE(m_broker.exitCode(), 0);
}

TestClient *tst_Liveness::connect(const QString &identity, BrokerProcess &broker)
{
    auto *client = new TestClient(identity);
    m_clients.append(client);
    if (!client->connectTo(broker.port()))
        qFatal("cannot connect as %s: %s", qPrintable(identity), qPrintable(client->errorString()));
    return client;
}

void tst_Liveness::declareQueue(TestClient *receiver, const QByteArray &name)
{
    QCOMPARE(receiver->request("declare_queue receiver_1_" + name), "Queue declared");
    QCOMPARE(receiver->request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver->request("bind receiver_1_" + name + " CipherMQ_exchange receiver_1_" + name),
             "Queue bound");
}

void tst_Liveness::heartbeatAnsweredKeepsConnection()
{
    TestClient *client = connect("sender_1");
    QElapsedTimer silence;
    silence.start();
    QCOMPARE(client->request("heartbeat 1"), "Heartbeat 1");
    // Answer every ping for longer than the heartbeat timeout (and the idle timeout): only the
    // pongs keep the connection open. A pong gets no reply: the line after each pong must be
    // the next ping.
    QElapsedTimer alive;
    alive.start();
    int pings = 0;
    while (alive.elapsed() < (kHeartbeatTimeoutSec + 1) * 1000 + 500) {
        const QByteArray line = client->readLine(3000);
        QCOMPARE(line, "PING");
        // Only after a second of silence (the broker's clock starts after ours). Checked on the
        // first ping only: a test process stalled for a second would see a later ping early.
        if (pings == 0)
            QVERIFY2(silence.elapsed() >= 1000, QByteArray::number(silence.elapsed()).constData());
        ++pings;
        client->send("pong");
    }
    QVERIFY(pings >= 2);
    QCOMPARE(client->request("get_public_key nobody"), "Public key not found");
}

void tst_Liveness::heartbeatSilenceCloses()
{
    TestClient *client = connect("sender_1");
    QElapsedTimer silence;
    silence.start();
    QCOMPARE(client->request("heartbeat 1"), "Heartbeat 1");
    // Pings while silent, then after heartbeat_timeout (3 s > 2 × 1 s) without an answer the
    // timeout line and the close.
    QList<QByteArray> pings;
    QCOMPARE(client->readLineStartingWith("Error:", 8000, &pings), kHeartbeatClose);
    QVERIFY2(silence.elapsed() >= kHeartbeatTimeoutSec * 1000,
             QByteArray::number(silence.elapsed()).constData());
    QVERIFY(!pings.isEmpty());
    for (const QByteArray &line : std::as_const(pings))
        QCOMPARE(line, "PING");
    QVERIFY(client->waitForDisconnected());
}

void tst_Liveness::pingNotHeldBehindSlowCommit()
{
    // A publish whose commit is held up (another PostgreSQL session locks the table it writes)
    // must not hold back the pings: the client's watchdog would take the broker for dead.
    cmq::test::TestDatabase database;
    QVERIFY2(database.isValid(), qPrintable(database.error()));
    BrokerProcess broker;
    broker.usePostgres(database);
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient *receiver = connect("receiver_1", broker);
    declareQueue(receiver, "slow");
    TestClient *sender = connect("sender_1", broker);
    QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_slow " + envelope("before")),
             "ACK before");
    QCOMPARE(sender->request("heartbeat 1"), "Heartbeat 1");

    cmq::test::TableLock lock(database, QStringLiteral("message_metadata"));
    QVERIFY2(lock.error().isEmpty(), qPrintable(lock.error()));
    sender->send("publish CipherMQ_exchange receiver_1_slow " + envelope("held"));
    // The ACK waits for the lock; pings come meanwhile (after a second of silence, checked
    // once a second), and nothing else does.
    const QByteArray first = sender->readLine(10000);
    const QByteArray second = sender->readLine(10000);
    QVERIFY(lock.release());
    QCOMPARE(first, "PING");
    QCOMPARE(second, "PING");
    QList<QByteArray> pings;
    QCOMPARE(sender->readLineStartingWith("ACK ", 15000, &pings), "ACK held");
    for (const QByteArray &line : std::as_const(pings))
        QCOMPARE(line, "PING");
}

void tst_Liveness::idleClientClosed()
{
    TestClient *client = connect("sender_1");
    QElapsedTimer silence;
    silence.start();
    QCOMPARE(client->request("get_public_key nobody"), "Public key not found");
    // A client that never asked for heartbeats gets no pings...
    QVERIFY(client->nothingWithin(kIdleTimeoutSec * 1000 * 6 / 10));
    // ...and is closed once it has been silent for idle_timeout_sec.
    QCOMPARE(client->readLine(kIdleTimeoutSec * 1000 + 3000), kIdleClose);
    QVERIFY2(silence.elapsed() >= kIdleTimeoutSec * 1000,
             QByteArray::number(silence.elapsed()).constData());
    QVERIFY(client->waitForDisconnected());
}

void tst_Liveness::consumerNeverIdleClosed()
{
    TestClient *receiver = connect("receiver_1");
    declareQueue(receiver, "idle");
    QElapsedTimer consumerSilence;
    consumerSilence.start();
    QCOMPARE(receiver->request("consume receiver_1_idle"), "Subscribed to queue");
    // A client without a consumer, silent over the same period, is closed: the idle timeout is
    // in force while the consumer is spared.
    TestClient *bystander = connect("sender_1");
    QCOMPARE(bystander->request("get_public_key nobody"), "Public key not found");
    QCOMPARE(bystander->readLine(kIdleTimeoutSec * 1000 + 3000), kIdleClose);
    QVERIFY(bystander->waitForDisconnected());
    // The consumer stays silent for more than twice the idle timeout and hears nothing...
    const qint64 quietMs = 2 * kIdleTimeoutSec * 1000 + 500 - consumerSilence.elapsed();
    QVERIFY(receiver->nothingWithin(int(qMax<qint64>(quietMs, 0))));
    QVERIFY(consumerSilence.elapsed() > 2 * kIdleTimeoutSec * 1000);
    // ...and is still served: a message published now reaches it.
    TestClient *sender = connect("sender_1");
    QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_idle " + envelope("idle-1")),
             "ACK idle-1");
    QCOMPARE(receiver->readLine(), "Message: idle-1 " + envelope("idle-1"));
    QCOMPARE(receiver->request("ack idle-1"), "ACK_CONFIRMED idle-1");
}

void tst_Liveness::gracefulShutdown()
{
    BrokerProcess broker;
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient *receiver = connect("receiver_1", broker);
    declareQueue(receiver, "down");
    QCOMPARE(receiver->request("consume receiver_1_down"), "Subscribed to queue");
    TestClient *sender = connect("sender_1", broker);
    QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_down " + envelope("warm-up")),
             "ACK warm-up");
    QCOMPARE(receiver->readLine(), "Message: warm-up " + envelope("warm-up"));
    QCOMPARE(receiver->request("ack warm-up"), "ACK_CONFIRMED warm-up");

    // Publishes on their way when SIGTERM arrives are all answered. One small write, so the
    // broker reads them together; several, so some are usually still being committed when
    // the signal is handled.
    constexpr int kInFlight = 20;
    QByteArray burst;
    QList<QByteArray> acks;
    for (int i = 0; i < kInFlight; ++i) {
        const QByteArray id = "down-" + QByteArray::number(i);
        burst += "publish CipherMQ_exchange receiver_1_down " + envelope(id) + '\n';
        acks.append("ACK " + id);
    }
    sender->sendRaw(burst);
    QVERIFY(broker.terminate());
    QCOMPARE(broker.exitStatus(), QProcess::NormalExit);
    QCOMPARE(broker.exitCode(), 0);

    // The notice goes out at once, ahead of replies still in flight, so it may fall anywhere
    // among the ACKs; the ACKs themselves come in order.
    QList<QByteArray> senderLines = sender->readLines(kInFlight + 1);
    QCOMPARE(senderLines.count(kShutdownNotice), 1);
    senderLines.removeOne(kShutdownNotice);
    QCOMPARE(senderLines, acks);
    QVERIFY(sender->waitForDisconnected());
    // The consumer is told too, after whatever was delivered to it before the notice.
    QList<QByteArray> delivered;
    QCOMPARE(receiver->readLineStartingWith(kShutdownNotice, 15000, &delivered), kShutdownNotice);
    for (qsizetype i = 0; i < delivered.size(); ++i) {
        const QByteArray id = "down-" + QByteArray::number(i);
        QCOMPARE(delivered.at(i), "Message: " + id + " " + envelope(id));
    }
    QVERIFY(receiver->waitForDisconnected());
}

QTEST_GUILESS_MAIN(tst_Liveness)
#include "tst_05_liveness.moc"
