// Rate limiting and connection caps against the real broker: a publish over its CN's publish
// rate is refused with "Error: rate limit exceeded ..." and nothing is stored; a batch is
// refused line by line; the request-rate bucket; per-CN and per-IP connection caps refused
// with one line; failed handshakes never touch the counts; reload turns the limits off.

#include <functional>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"

using cmq::test::BrokerProcess;
using cmq::test::freePort;
using cmq::test::TestClient;

namespace {

QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"Y2lwaGVy"})";
}

// Reads `count` replies: how many were the expected answer to request i, and how many were
// refused by the request rate. Any other line fails the test (the counts do not add up).
std::pair<int, int> answeredAndRefused(TestClient &client, int count,
                                       const std::function<QByteArray(int)> &expected)
{
    int answered = 0, refused = 0;
    for (int i = 0; i < count; ++i) {
        const QByteArray line = client.readLine();
        if (line == expected(i))
            ++answered;
        else if (line.startsWith("Error: rate limit exceeded: request rate of "))
            ++refused;
        else
            qWarning("unexpected reply to request %d: %s", i, line.constData());
    }
    return {answered, refused};
}

} // namespace

class tst_RateLimit : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void publishOverRateIsRefusedAndNotStored();
    void batchOverRateIsRefusedPerMessage();
    void requestRate();
    void malformedLinesCountAgainstRequestRate();
    void perCnConnectionCap();
    void failedHandshakesAreNotCounted();
    void perIpConnectionCap();
    void perIpPublishBucket();
    void reloadTurnsLimitsOff();

private:
    TestClient *connect(const QString &identity);
    QJsonObject admin(const QByteArray &request);
    int ready(const QString &queue);
    QJsonObject bucket(const QString &scope, const QString &key);
    // Closes every data connection of the test and waits until the broker has seen it.
    void closeAll();

    BrokerProcess m_broker;
    quint16 m_adminPort = 0;
    TestClient *m_admin = nullptr;
    QList<TestClient *> m_clients;
};

void tst_RateLimit::initTestCase()
{
    m_adminPort = freePort();
    m_broker.set("admin.enabled", "true");
    m_broker.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(m_adminPort));
    m_broker.set("rate_limit.enabled", "true");
    m_broker.set("rate_limit.publish_rps", "2.0");
    m_broker.set("rate_limit.publish_burst", "5.0");
    m_broker.set("rate_limit.global_rps", "1000.0");
    m_broker.set("rate_limit.global_burst", "300.0");
    // Every test client comes from 127.0.0.1: the per-IP buckets get room for all of them, so
    // that the per-CN limits are what the tests below meet (the per-IP ones get their turn).
    m_broker.set("rate_limit.ip_global_rps", "100000.0");
    m_broker.set("rate_limit.ip_global_burst", "100000.0");
    m_broker.set("rate_limit.ip_publish_rps", "100000.0");
    m_broker.set("rate_limit.ip_publish_burst", "100000.0");
    m_broker.set("rate_limit.max_connections_per_cn", "3");
    m_broker.set("rate_limit.max_connections_per_ip", "12");
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    m_admin = new TestClient("ops-admin");
    QVERIFY(m_admin->connectTo(m_adminPort));
    TestClient *receiver = connect("receiver_1");
    QCOMPARE(receiver->request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver->request("declare_queue receiver_1_rl"), "Queue declared");
    QCOMPARE(receiver->request("bind receiver_1_rl CipherMQ_exchange receiver_1_rl"),
             "Queue bound");
    receiver->disconnect();
}

void tst_RateLimit::cleanupTestCase()
{
    qDeleteAll(m_clients);
    delete m_admin;
    QVERIFY(m_broker.terminate());
    QCOMPARE(m_broker.exitCode(), 0);
}

TestClient *tst_RateLimit::connect(const QString &identity)
{
    auto *client = new TestClient(identity);
    m_clients.append(client);
    if (!client->connectTo(m_broker.port()))
        qFatal("cannot connect as %s", qPrintable(identity));
    return client;
}

QJsonObject tst_RateLimit::admin(const QByteArray &request)
{
    return QJsonDocument::fromJson(m_admin->request(request)).object();
}

int tst_RateLimit::ready(const QString &queue)
{
    const QJsonArray queues = QJsonDocument::fromJson(m_admin->request("queues")).array();
    for (const QJsonValue &v : queues) {
        if (v.toObject().value("name").toString() == queue)
            return v.toObject().value("ready").toInt();
    }
    return -1;
}

void tst_RateLimit::closeAll()
{
    qDeleteAll(m_clients);
    m_clients.clear();
    QTRY_COMPARE(bucket("ip", "127.0.0.1").value("connections").toInt(), 0);
}

QJsonObject tst_RateLimit::bucket(const QString &scope, const QString &key)
{
    for (const QJsonValue &v : admin("ratelimits").value("buckets").toArray()) {
        const QJsonObject o = v.toObject();
        if (o.value("scope").toString() == scope && o.value("key").toString() == key)
            return o;
    }
    return {};
}

void tst_RateLimit::publishOverRateIsRefusedAndNotStored()
{
    TestClient *sender = connect("sender_1");
    // The burst of 5 passes back to back; the sixth is over the rate.
    for (int i = 0; i < 5; ++i) {
        const QByteArray id = "rl-" + QByteArray::number(i);
        QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_rl " + envelope(id)),
                 "ACK " + id);
    }
    QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_rl " + envelope("rl-5")),
             "Error: rate limit exceeded: publish rate of CN 'sender_1' is limited to 2/s "
             "(burst 5)");
    QCOMPARE(ready("receiver_1_rl"), 5); // nothing stored for the refused one
    // Other commands still pass: only the publish bucket is empty.
    QCOMPARE(sender->request("get_public_key nobody"), "Public key not found");
    const QJsonObject cn = bucket("cn", "sender_1");
    QCOMPARE(cn.value("publish").toObject().value("accepted").toInt(), 5);
    QCOMPARE(cn.value("publish").toObject().value("rejected").toInt(), 1);
    QCOMPARE(cn.value("publish").toObject().value("rate").toDouble(), 2.0);
    QVERIFY(cn.value("publish").toObject().value("tokens").toDouble() < 1.0);

    // Refusals cost nothing: once a token has come back, the same id is accepted (it was not
    // stored, so it is no duplicate either).
    QByteArray reply;
    QDeadlineTimer deadline(5000);
    do {
        reply = sender->request("publish CipherMQ_exchange receiver_1_rl " + envelope("rl-5"));
        if (reply != "ACK rl-5")
            QTest::qWait(100);
    } while (reply != "ACK rl-5" && !deadline.hasExpired());
    QCOMPARE(reply, "ACK rl-5");
    QCOMPARE(ready("receiver_1_rl"), 6);
    m_admin->send("metrics");
    const QByteArray metrics = m_admin->readLineStartingWith(
        "ciphermq_rate_limit_rejections_total{scope=\"cn\",bucket=\"publish\"}");
    QVERIFY2(metrics.endsWith(' ') == false && metrics.split(' ').last().toInt() >= 1,
             metrics.constData());
    m_admin->readLineStartingWith("# EOF");
}

void tst_RateLimit::batchOverRateIsRefusedPerMessage()
{
    TestClient *sender = connect("publisher-svc-1");
    // Six messages against a burst of five: one token is enough to start, the batch takes
    // all six (the bucket goes into debt), and the next batch is refused line by line.
    QByteArray batch = "[" + envelope("b-0");
    for (int i = 1; i < 6; ++i)
        batch += "," + envelope("b-" + QByteArray::number(i));
    batch += "]";
    sender->send("publish_batch CipherMQ_exchange receiver_1_rl " + batch);
    for (int i = 0; i < 6; ++i)
        QCOMPARE(sender->readLine(), "ACK b-" + QByteArray::number(i));
    sender->send("publish_batch CipherMQ_exchange receiver_1_rl [" + envelope("b-6") + "," +
                 envelope("b-7") + "]");
    const QByteArray text = "Error: rate limit exceeded: publish rate of CN 'publisher-svc-1' is "
                            "limited to 2/s (burst 5) for message ";
    QCOMPARE(sender->readLine(), text + "b-6");
    QCOMPARE(sender->readLine(), text + "b-7");
    QCOMPARE(
        bucket("cn", "publisher-svc-1").value("publish").toObject().value("tokens").toDouble() < 0,
        true);
}

void tst_RateLimit::requestRate()
{
    // 400 pipelined requests against a request burst of 300 (CN and IP buckets alike).
    TestClient *client = connect("svc-a");
    QByteArray burst;
    for (int i = 0; i < 400; ++i)
        burst += "get_public_key nobody\n";
    client->sendRaw(burst);
    const auto [answered, refused] =
        answeredAndRefused(*client, 400, [](int) { return QByteArray("Public key not found"); });
    QCOMPARE(answered + refused, 400);
    QVERIFY2(answered >= 300 && answered < 400, qPrintable(QString::number(answered)));
    QCOMPARE(bucket("cn", "svc-a").value("global").toObject().value("rejected").toInt(), refused);
    QCOMPARE(bucket("ip", "127.0.0.1").value("global").toObject().value("rejected").toInt(), 0);
}

void tst_RateLimit::malformedLinesCountAgainstRequestRate()
{
    // 400 pipelined lines the broker cannot execute, against a request burst of 300: each costs
    // a request like any other, so junk cannot be sent faster than the client's rate.
    const QList<QByteArray> junk = {"no_such_command x", "declare_queue", "ack \xff",
                                    "bind q\re k"};
    const QList<QByteArray> replies = {
        "Unknown command", "Missing queue name", "Error: Invalid UTF-8 in request line",
        "Error: Invalid request line: a carriage return may only end the line"};
    TestClient *client = connect("publisher-svc-1");
    QByteArray burst;
    for (int i = 0; i < 400; ++i)
        burst += junk[i % junk.size()] + '\n';
    client->sendRaw(burst);
    const auto [answered, refused] =
        answeredAndRefused(*client, 400, [&](int i) { return replies[i % replies.size()]; });
    QCOMPARE(answered + refused, 400);
    QVERIFY2(answered >= 300 && answered < 400, qPrintable(QString::number(answered)));
    QCOMPARE(bucket("cn", "publisher-svc-1").value("global").toObject().value("rejected").toInt(),
             refused);
}

void tst_RateLimit::perCnConnectionCap()
{
    QList<TestClient *> open;
    for (int i = 0; i < 3; ++i) {
        open.append(connect("svc-b"));
        QCOMPARE(open.last()->request("get_public_key nobody"), "Public key not found");
    }
    TestClient fourth("svc-b");
    QVERIFY(fourth.connectTo(m_broker.port()));
    QCOMPARE(fourth.readLine(), "Error: Too many connections for CN 'svc-b' (limit 3)");
    QVERIFY(fourth.waitForDisconnected());
    QCOMPARE(bucket("cn", "svc-b").value("connections").toInt(), 3);
    // A slot freed is a slot usable, exactly once.
    open.first()->disconnect();
    QTRY_COMPARE(bucket("cn", "svc-b").value("connections").toInt(), 2);
    TestClient again("svc-b");
    QVERIFY(again.connectTo(m_broker.port()));
    QCOMPARE(again.request("get_public_key nobody"), "Public key not found");
    TestClient over("svc-b");
    QVERIFY(over.connectTo(m_broker.port()));
    QCOMPARE(over.readLine(), "Error: Too many connections for CN 'svc-b' (limit 3)");
}

void tst_RateLimit::failedHandshakesAreNotCounted()
{
    // A known baseline: exactly two connections open.
    closeAll();
    connect("svc-c");
    connect("svc-c");
    QTRY_COMPARE(bucket("ip", "127.0.0.1").value("connections").toInt(), 2);
    const int before = 2;
    const int opened =
        admin("json").value("counters").toObject().value("connections_opened").toInt();
    // Handshakes that fail, connections that never speak TLS, and identities refused right
    // after the handshake: none of them is ever counted (or discounted).
    for (const char *identity : {"", "wrongca-client", "expired", "stranger", "nocn"}) {
        TestClient client(QString::fromLatin1(identity));
        if (client.connectTo(m_broker.port()))
            client.readLine(3000);
        client.waitForDisconnected(3000);
    }
    for (int i = 0; i < 3; ++i) {
        QTcpSocket raw;
        raw.connectToHost(QHostAddress::LocalHost, m_broker.port());
        QVERIFY(raw.waitForConnected());
        raw.write("GET / HTTP/1.0\r\n\r\n");
        QVERIFY(raw.waitForDisconnected(5000));
    }
    const QJsonObject counters = admin("json").value("counters").toObject();
    QCOMPARE(counters.value("connections_opened").toInt(), opened);
    QVERIFY(counters.value("tls_handshake_failures").toInt() >= 4);
    QVERIFY(counters.value("connections_refused").toInt() >= 2);
    QCOMPARE(bucket("ip", "127.0.0.1").value("connections").toInt(), before);
}

void tst_RateLimit::perIpConnectionCap()
{
    // Start from nothing open, so the count is known exactly.
    closeAll();
    QList<TestClient *> open;
    for (const char *identity : {"svc-c", "receiver_2", "worker-svc-1", "both-svc"}) {
        for (int i = 0; i < 3; ++i) {
            open.append(connect(QString::fromLatin1(identity)));
            QCOMPARE(open.last()->request("heartbeat 60"), "Heartbeat 60");
        }
    }
    QCOMPARE(bucket("ip", "127.0.0.1").value("connections").toInt(), 12);
    TestClient over("sender_1");
    QVERIFY(over.connectTo(m_broker.port()));
    QCOMPARE(over.readLine(), "Error: Too many connections from 127.0.0.1 (limit 12)");
    QVERIFY(over.waitForDisconnected());
    QVERIFY(over.readLine(0).isNull());
    // The admin listener is not the data listener: operators still get in.
    TestClient operatorClient("ops-admin");
    QVERIFY(operatorClient.connectTo(m_adminPort));
    QVERIFY(operatorClient.request("help").startsWith("{\"commands\":"));
    open.takeLast()->disconnect();
    QTRY_COMPARE(bucket("ip", "127.0.0.1").value("connections").toInt(), 11);
    TestClient fits("sender_1");
    QVERIFY(fits.connectTo(m_broker.port()));
    QCOMPARE(fits.request("get_public_key nobody"), "Public key not found");
    m_admin->send("metrics");
    QCOMPARE(m_admin->readLineStartingWith(
                 "ciphermq_connections_refused_total{listener=\"data\",reason=\"cn_limit\"}"),
             "ciphermq_connections_refused_total{listener=\"data\",reason=\"cn_limit\"} 2");
    QCOMPARE(m_admin->readLineStartingWith(
                 "ciphermq_connections_refused_total{listener=\"data\",reason=\"ip_limit\"}"),
             "ciphermq_connections_refused_total{listener=\"data\",reason=\"ip_limit\"} 1");
    m_admin->readLineStartingWith("# EOF");
}

void tst_RateLimit::perIpPublishBucket()
{
    // Three publishes a second for the whole address, whichever CNs send them.
    m_broker.set("rate_limit.ip_publish_rps", "0.1");
    m_broker.set("rate_limit.ip_publish_burst", "3.0");
    m_broker.writeConfig();
    QCOMPARE(admin("reload").value("rate_limit").toObject().value("ip_publish_burst").toDouble(),
             3.0);
    closeAll();
    TestClient *a = connect("svc-a");
    TestClient *c = connect("svc-c");
    QCOMPARE(a->request("publish CipherMQ_exchange receiver_1_rl " + envelope("ip-0")), "ACK ip-0");
    QCOMPARE(c->request("publish CipherMQ_exchange receiver_1_rl " + envelope("ip-1")), "ACK ip-1");
    QCOMPARE(a->request("publish CipherMQ_exchange receiver_1_rl " + envelope("ip-2")), "ACK ip-2");
    QCOMPARE(c->request("publish CipherMQ_exchange receiver_1_rl " + envelope("ip-3")),
             "Error: rate limit exceeded: publish rate of IP 127.0.0.1 is limited to 0.1/s "
             "(burst 3)");
    QCOMPARE(bucket("ip", "127.0.0.1").value("publish").toObject().value("rejected").toInt(), 1);
    m_broker.set("rate_limit.ip_publish_rps", "100000.0");
    m_broker.set("rate_limit.ip_publish_burst", "100000.0");
}

void tst_RateLimit::reloadTurnsLimitsOff()
{
    m_broker.set("rate_limit.enabled", "false");
    m_broker.writeConfig();
    const QJsonObject reply = admin("reload");
    QCOMPARE(reply.value("rate_limit").toObject().value("enabled").toBool(), false);
    TestClient *sender = connect("sender_1");
    for (int i = 0; i < 20; ++i) {
        const QByteArray id = "off-" + QByteArray::number(i);
        QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_rl " + envelope(id)),
                 "ACK " + id);
    }
    // Caps are off too: well over 3 connections for one CN and 12 for the address.
    QList<TestClient *> many;
    for (int i = 0; i < 5; ++i) {
        many.append(connect("svc-b"));
        QCOMPARE(many.last()->request("get_public_key nobody"), "Public key not found");
    }
    // Counting went on while off: turning the limits back on finds the true numbers.
    m_broker.set("rate_limit.enabled", "true");
    m_broker.writeConfig();
    QCOMPARE(admin("reload").value("rate_limit").toObject().value("enabled").toBool(), true);
    QVERIFY(bucket("cn", "svc-b").value("connections").toInt() >= 5);
    TestClient refused("svc-b");
    QVERIFY(refused.connectTo(m_broker.port()));
    QVERIFY(refused.readLine().startsWith("Error: Too many connections"));
}

QTEST_GUILESS_MAIN(tst_RateLimit)
#include "tst_12_ratelimit.moc"
