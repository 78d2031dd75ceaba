// Two broker nodes on one PostgreSQL database (docs/OPERATIONS.md, High availability): the
// second is a standby that sends data clients to the active one; kill -9 of the active in the
// middle of a stream loses no ACKed message and delivers none that got an error; SIGTERM hands
// over without waiting for a lease; and an active frozen past its lease commits nothing once
// the other node has taken over, then steps down and comes back as a standby. A deposed node's
// publishes get the documented "Not the active node" line, never the database's error text.

#include <csignal>
#include <memory>

#include <QSignalSpy>
#include <QSqlError>
#include <QSqlQuery>
#include <QTcpSocket>
#include <QtTest>

#include "brokerprocess.h"
#include "client/blockingclient.h"
#include "client/client.h"
#include "clienttest.h"
#include "hatest.h"
#include "testclient.h"
#include "testenv.h"
#include "testpostgres.h"

using namespace cmq::test;

namespace {
// docs/PROTOCOL.md, "Publishing": a deposed node's refusal.
const QByteArray NotActive =
    "Error: Not the active node: another node has taken over, the message was not stored";
} // namespace

namespace {

// The body of GET /metrics from the plain-HTTP metrics listener on `port`.
QByteArray metricsText(quint16 port)
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, port);
    if (!socket.waitForConnected(5000))
        return {};
    socket.write("GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    QByteArray all;
    QDeadlineTimer deadline(10000);
    while (socket.state() == QAbstractSocket::ConnectedState && !deadline.hasExpired()) {
        socket.waitForReadyRead(int(qMin<qint64>(500, deadline.remainingTime())));
        all += socket.readAll();
    }
    return all + socket.readAll();
}

} // namespace

class tst_Cluster : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void standbyRedirects();
    void killActiveMidStream();
    void sigtermHandsOverAtOnce();
    void frozenActiveIsFenced();
    void deposedNodeAnswersPublishesCleanly();
    void sqliteSecondNodeIsStandby();
    void clientLibraryFollowsTheActive();

private:
    void configure(BrokerProcess &node, const QByteArray &name, int leaseMs, int pollMs);

    std::unique_ptr<TestDatabase> m_database;
    BrokerProcess m_a, m_b;
};

void tst_Cluster::init()
{
    m_database = std::make_unique<TestDatabase>();
    QVERIFY2(m_database->isValid(), qPrintable(m_database->error()));
}

void tst_Cluster::cleanup()
{
    m_a.kill();
    m_b.kill();
    m_database.reset();
}

void tst_Cluster::configure(BrokerProcess &node, const QByteArray &name, int leaseMs, int pollMs)
{
    node.usePostgres(*m_database);
    node.set("cluster.node_id", '"' + QString::fromLatin1(name) + '"');
    node.set("cluster.client_address", QStringLiteral("\"127.0.0.1:%1\"").arg(node.port()));
    node.set("cluster.lease_ms", QString::number(leaseMs));
    node.set("cluster.poll_ms", QString::number(pollMs));
    node.set("performance.max_queue_size", "100000");
    node.set("rate_limit.enabled", "false");
}

void tst_Cluster::standbyRedirects()
{
    configure(m_a, "node-a", 10000, 1000);
    configure(m_b, "node-b", 10000, 1000);
    const quint16 metricsA = freePort(), metricsB = freePort();
    m_a.set("admin.metrics_http_address", QStringLiteral("\"127.0.0.1:%1\"").arg(metricsA));
    m_b.set("admin.metrics_http_address", QStringLiteral("\"127.0.0.1:%1\"").arg(metricsB));
    QVERIFY2(m_a.start(), m_a.output().constData());
    QVERIFY2(m_b.start(), m_b.output().constData());
    QTRY_VERIFY2_WITH_TIMEOUT(m_b.output().contains("standby"), m_b.output().constData(), 10000);

    TestClient client("sender_1");
    QVERIFY(client.connectTo(m_b.port()));
    QCOMPARE(client.readLine(), haRedirectTo(m_a.port()));
    QVERIFY(client.waitForDisconnected());
    // Any request a client had already sent changes nothing.
    TestClient eager("receiver_1");
    QVERIFY(eager.connectTo(m_b.port()));
    eager.send("declare_queue receiver_1_standby");
    QCOMPARE(eager.readLine(), haRedirectTo(m_a.port()));
    QVERIFY(eager.waitForDisconnected());
    QVERIFY(haServes(m_a.port(), "receiver_1_active"));

    const QByteArray active = metricsText(metricsA), standby = metricsText(metricsB);
    QVERIFY2(active.contains("\nciphermq_cluster_role 1\n"), active.constData());
    QVERIFY2(active.contains("\nciphermq_cluster_epoch 1\n"), active.constData());
    QVERIFY2(active.contains("\nciphermq_cluster_takeovers_total 1\n"), active.constData());
    QVERIFY2(standby.contains("\nciphermq_cluster_role 0\n"), standby.constData());
    QVERIFY2(standby.contains("\nciphermq_cluster_epoch 1\n"), standby.constData());
    QVERIFY2(standby.contains("\nciphermq_cluster_takeovers_total 0\n"), standby.constData());
    // A standby stops as cleanly as an active node.
    QVERIFY(m_b.terminate());
    QCOMPARE(m_b.exitStatus(), QProcess::NormalExit);
    QCOMPARE(m_b.exitCode(), 0);
}

void tst_Cluster::killActiveMidStream()
{
    configure(m_a, "node-a", 3000, 500);
    configure(m_b, "node-b", 3000, 500);
    QVERIFY2(m_a.start(), m_a.output().constData());
    QVERIFY2(m_b.start(), m_b.output().constData());
    QVERIFY(haDeclare(m_a.port(), "receiver_1_ha"));

    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(m_a.port()));
    QList<QByteArray> ids;
    QByteArray stream;
    for (int i = 0; i < 3000; ++i) {
        ids << "ha-" + QByteArray::number(i);
        stream += "publish CipherMQ_exchange receiver_1_ha " + haEnvelope(ids.last()) + "\n";
    }
    sender.sendRaw(stream);
    QSet<QByteArray> acked, refused;
    // Replies come in request order: the n-th reply is about the n-th publish.
    const auto take = [&](const QByteArray &line) {
        const QByteArray id = ids.value(int(acked.size() + refused.size()));
        if (line == "ACK " + id)
            acked.insert(id);
        else if (line.startsWith("Error:"))
            refused.insert(id);
    };
    while (acked.size() < 800) {
        const QByteArray line = sender.readLine(30000);
        QVERIFY2(!line.isNull(), "the stream stalled before the kill point");
        take(line);
    }
    m_a.kill();
    for (QByteArray line = sender.readLine(2000); !line.isNull(); line = sender.readLine(2000))
        take(line);

    QTRY_VERIFY_WITH_TIMEOUT(haServes(m_b.port(), "receiver_1_ha"), 60000);
    const QSet<QByteArray> received = haDrain(m_b.port(), "receiver_1_ha");
    const QSet<QByteArray> lost = acked - received;
    QVERIFY2(lost.isEmpty(), qPrintable(QStringLiteral("%1 ACKed messages lost, e.g. %2")
                                            .arg(lost.size())
                                            .arg(QString::fromUtf8(lost.values().value(0)))));
    const QSet<QByteArray> refusedButDelivered = refused & received;
    QVERIFY2(refusedButDelivered.isEmpty(), refusedButDelivered.values().value(0).constData());
    QTRY_VERIFY2_WITH_TIMEOUT(m_b.output().contains("node node-b is active with epoch 2"),
                              m_b.output().constData(), 10000);
}

void tst_Cluster::sigtermHandsOverAtOnce()
{
    // A lease far longer than the wait below: the standby may not wait for it to run out.
    configure(m_a, "node-a", 120000, 1000);
    configure(m_b, "node-b", 120000, 1000);
    QVERIFY2(m_a.start(), m_a.output().constData());
    QVERIFY2(m_b.start(), m_b.output().constData());
    QVERIFY(haDeclare(m_a.port(), "receiver_1_term"));
    {
        TestClient sender("sender_1");
        QVERIFY(sender.connectTo(m_a.port()));
        QCOMPARE(
            sender.request("publish CipherMQ_exchange receiver_1_term " + haEnvelope("term-1")),
            "ACK term-1");
    }
    TestClient client("receiver_1");
    QVERIFY(client.connectTo(m_a.port()));
    QCOMPARE(client.request("declare_queue receiver_1_term"), "Queue declared"); // admitted
    QCOMPARE(::kill(pid_t(m_a.pid()), SIGTERM), 0);
    const QByteArray notice = client.readLine();
    QVERIFY(m_a.terminate());
    QCOMPARE(notice, "Server shutting down");

    QTRY_VERIFY_WITH_TIMEOUT(haServes(m_b.port(), "receiver_1_term"), 30000);
    QTRY_VERIFY2_WITH_TIMEOUT(m_b.output().contains("the leadership lock was free"),
                              m_b.output().constData(), 10000);
    QCOMPARE(haDrain(m_b.port(), "receiver_1_term"), (QSet<QByteArray>{"term-1"}));
}

void tst_Cluster::frozenActiveIsFenced()
{
    configure(m_a, "node-a", 2000, 500);
    configure(m_b, "node-b", 2000, 500);
    QVERIFY2(m_a.start(), m_a.output().constData());
    QVERIFY2(m_b.start(), m_b.output().constData());
    QVERIFY(haDeclare(m_a.port(), "receiver_1_frozen"));
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(m_a.port()));
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_frozen " + haEnvelope("before")),
             "ACK before");

    QCOMPARE(::kill(pid_t(m_a.pid()), SIGSTOP), 0);
    // Read by the frozen node only after it wakes, by then no longer the active one.
    QByteArray stream;
    for (int i = 0; i < 200; ++i)
        stream += "publish CipherMQ_exchange receiver_1_frozen " +
                  haEnvelope("frozen-" + QByteArray::number(i)) + "\n";
    sender.sendRaw(stream);
    QTRY_VERIFY_WITH_TIMEOUT(haServes(m_b.port(), "receiver_1_frozen"), 60000);
    QTRY_VERIFY2_WITH_TIMEOUT(m_b.output().contains("ran out"), m_b.output().constData(), 10000);
    QCOMPARE(::kill(pid_t(m_a.pid()), SIGCONT), 0);

    for (QByteArray line = sender.readLine(5000); !line.isNull(); line = sender.readLine(5000)) {
        QVERIFY2(!line.startsWith("ACK "), line.constData());
        // Only documented lines: the fenced refusal or the shutdown notice, no SQL text.
        QVERIFY2(line == NotActive || line == "Server shutting down", line.constData());
    }
    // Nothing of it reached the database, and the old node is a standby now.
    QSqlDatabase db = m_database->connection();
    QSqlQuery query(db);
    QVERIFY2(query.exec("SELECT count(*) FROM message_metadata WHERE message_id LIKE 'frozen-%'"),
             qPrintable(query.lastError().text()));
    QVERIFY(query.next());
    QCOMPARE(query.value(0).toInt(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(haGreeting(m_a.port()), haRedirectTo(m_b.port()), 60000);
    QCOMPARE(haDrain(m_b.port(), "receiver_1_frozen"), (QSet<QByteArray>{"before"}));
}

void tst_Cluster::deposedNodeAnswersPublishesCleanly()
{
    // Deposed without knowing it yet: its next lease renewal is a minute away, and meanwhile
    // the epoch moves on, as when another node takes over. Its writes cannot commit; its
    // publishers are told so in the documented words.
    configure(m_a, "node-a", 120000, 60000);
    QVERIFY2(m_a.start(), m_a.output().constData());
    QVERIFY(haDeclare(m_a.port(), "receiver_1_deposed"));
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(m_a.port()));
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_deposed " + haEnvelope("kept")),
             "ACK kept");
    QSqlDatabase db = m_database->connection();
    QSqlQuery query(db);
    QVERIFY2(query.exec("UPDATE cluster_leader SET epoch = epoch + 1 WHERE id = 1"),
             qPrintable(query.lastError().text()));

    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_deposed " + haEnvelope("late")),
             NotActive);
    sender.send("publish_batch CipherMQ_exchange receiver_1_deposed [" + haEnvelope("late-1") +
                ',' + haEnvelope("late-2") + ']');
    QCOMPARE(sender.readLines(2), (QList<QByteArray>{NotActive + " for message late-1",
                                                     NotActive + " for message late-2"}));
    QVERIFY2(query.exec("SELECT count(*) FROM message_metadata WHERE message_id LIKE 'late%'"),
             qPrintable(query.lastError().text()));
    QVERIFY(query.next());
    QCOMPARE(query.value(0).toInt(), 0);
    // The database's own words stay in the node's log.
    QTRY_VERIFY2_WITH_TIMEOUT(m_a.output().contains("no longer the active one"),
                              m_a.output().constData(), 10000);
}

// One SQLite file: the second broker waits on the file lock as a standby and takes over when
// the first exits.
void tst_Cluster::sqliteSecondNodeIsStandby()
{
    BrokerProcess a, b; // on SQLite, unlike the members
    QTemporaryDir shared;
    const QString path = QStringLiteral("\"%1\"").arg(shared.filePath(QStringLiteral("cmq.db")));
    for (BrokerProcess *node : {&a, &b}) {
        node->set("database.path", path);
        node->set("cluster.client_address", QStringLiteral("\"127.0.0.1:%1\"").arg(node->port()));
        node->set("cluster.poll_ms", "200");
    }
    QVERIFY2(a.start(), a.output().constData());
    QVERIFY2(b.start(), b.output().constData());
    QCOMPARE(haGreeting(b.port()), haRedirectTo(a.port()));
    QVERIFY(haDeclare(a.port(), "receiver_1_lite"));
    {
        TestClient sender("sender_1");
        QVERIFY(sender.connectTo(a.port()));
        QCOMPARE(
            sender.request("publish CipherMQ_exchange receiver_1_lite " + haEnvelope("lite-1")),
            "ACK lite-1");
    }
    QVERIFY(a.terminate());
    QTRY_VERIFY_WITH_TIMEOUT(haServes(b.port(), "receiver_1_lite"), 30000);
    QCOMPARE(haDrain(b.port(), "receiver_1_lite"), (QSet<QByteArray>{"lite-1"}));
}

// The client library, given both nodes standby first: it moves on from the redirect line at
// once, and after kill -9 of the active finds the new one, where its subscription is restored.
void tst_Cluster::clientLibraryFollowsTheActive()
{
    using namespace cmq::client;
    constexpr int Patience = 60000;
    configure(m_a, "node-a", 3000, 500);
    configure(m_b, "node-b", 3000, 500);
    QVERIFY2(m_a.start(), m_a.output().constData());
    QVERIFY2(m_b.start(), m_b.output().constData());
    QTemporaryDir keys;
    Client receiver(clientOptions("svc-c", {m_b.port(), m_a.port()}, makeKeyPair(keys, "svc-c")));
    Inbox inbox;
    QVERIFY(receiver.listen(inbox.handler()).ok());
    QSignalSpy subscribed(&receiver, &Client::subscribed);
    QSignalSpy failed(&receiver, &Client::connectionFailed);
    QSignalSpy connected(&receiver, &Client::connected);
    QVERIFY(receiver.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);
    QCOMPARE(connected.first().at(0).toString(), QStringLiteral("127.0.0.1:%1").arg(m_a.port()));
    QVERIFY(!failed.isEmpty());
    QVERIFY2(failed.first().at(1).toString().contains(QString::fromUtf8(haRedirectTo(m_a.port()))),
             qPrintable(failed.first().at(1).toString()));

    m_a.kill();
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 2, Patience);
    QCOMPARE(connected.last().at(0).toString(), QStringLiteral("127.0.0.1:%1").arg(m_b.port()));
    BlockingClient sender(clientOptions("svc-a", {m_a.port(), m_b.port()}));
    QVERIFY(sender.connect(Patience).ok());
    QVERIFY(sender.send("svc-c", "after takeover", Patience).ok());
    QTRY_COMPARE_WITH_TIMEOUT(inbox.distinct(), 1, Patience);
    QCOMPARE(inbox.payloadById.values().first(), "after takeover");
}

QTEST_GUILESS_MAIN(tst_Cluster)
#include "tst_34_cluster.moc"
