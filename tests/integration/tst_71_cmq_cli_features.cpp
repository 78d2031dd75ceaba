// The cmq binary's longer runs, split from tst_24_cmq_cli (which has the commands one by one):
// `cmq listen` draining a backlog far past the prefetch while its acks run into the rate limit,
// size padding by default (and --no-padding) as the broker stores it, and `cmq presence`
// (lines, --json, --count, an identity in no presence group). Set-up shared in cmqclitest.h.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QtTest>

#include "client/blockingclient.h"
#include "cmqclitest.h"
#include "crypto/envelopecrypto.h"
#include "testclient.h"

using namespace cmq::test;
namespace crypto = cmq::crypto;

class tst_CmqCliFeatures : public QObject, public CmqCliTest
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { setUpCmqCli(); }
    void listenDrainsBacklogUnderRateLimit();
    void paddedByDefault();
    void presence();
};

void tst_CmqCliFeatures::listenDrainsBacklogUnderRateLimit()
{
    // A backlog far larger than the prefetch (64), drained by one listener whose acks run into
    // the per-CN request limit (the default 100/s, burst 200). A refused ack must go again:
    // the broker counts an unacked delivery against the prefetch, so dropping refused acks
    // stopped the deliveries at 64 unacked. Only the receiver's own bucket limits here.
    BrokerProcess limited;
    const quint16 adminPort = freePort();
    limited.set("admin.enabled", "true");
    limited.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(adminPort));
    limited.set("rate_limit.enabled", "true");
    for (const char *key : {"publish_rps", "publish_burst", "ip_publish_rps", "ip_publish_burst",
                            "ip_global_rps", "ip_global_burst"})
        limited.set(QStringLiteral("rate_limit.") + key, "100000.0");
    QVERIFY2(limited.start(), limited.output().constData());
    const QStringList receiver =
        cmqConnection("receiver_1", {limited.port()}) +
        QStringList{"--identity", identity("receiver_1"), "--connect-timeout", "20"};
    const QStringList sender =
        cmqConnection("svc-a", {limited.port()}) +
        QStringList{"--identity", identity("svc-a"), "--connect-timeout", "20"};
    const auto queue = [&]() {
        const Run run =
            cmq(QStringList{"admin", "--address", QStringLiteral("127.0.0.1:%1").arg(adminPort),
                            "--ca", certFile("ca.crt"), "--cert", certFile("ops-admin.crt"),
                            "--key", certFile("ops-admin.key"), "queues"});
        for (const QJsonValue &v : QJsonDocument::fromJson(run.out).array())
            if (v.toObject().value("name").toString() == "receiver_1_queue")
                return v.toObject();
        return QJsonObject();
    };

    QCOMPARE(cmq({"keygen", "--identity", identity("receiver_1")}).exitCode, 0);
    // Registers the key, declares and binds receiver_1_queue.
    const Run setUp = cmq(QStringList{"listen", "--timeout", "1"} + receiver);
    QVERIFY2(setUp.exitCode == 0, setUp.err.constData());

    constexpr int Backlog = 500;
    QByteArray input;
    QSet<QByteArray> expected;
    for (int i = 1; i <= Backlog; ++i) {
        const QByteArray line = "backlog " + QByteArray::number(i);
        input += line + '\n';
        expected.insert(line);
    }
    const Run sent =
        cmq(QStringList{"send", "--to", "receiver_1", "--lines", "-", "--timeout", "60"} + sender,
            input);
    QVERIFY2(sent.exitCode == 0, sent.err.constData());
    QCOMPARE(sent.out.trimmed().split('\n').size(), Backlog);
    QCOMPARE(queue().value("ready").toInt(), Backlog);

    const Run drained = cmq(
        QStringList{"listen", "--count", QString::number(Backlog), "--timeout", "40"} + receiver);
    QVERIFY2(drained.exitCode == 0, drained.err.constData());
    QList<QByteArray> lines = drained.out.split('\n');
    QCOMPARE(lines.takeLast(), QByteArray());
    QCOMPARE(lines.size(), Backlog);
    QCOMPARE(QSet<QByteArray>(lines.cbegin(), lines.cend()), expected);

    // Every one acknowledged before the listener left: nothing ready, nothing unacked.
    const QJsonObject after = queue();
    QCOMPARE(after.value("acknowledged").toInt(), Backlog);
    QCOMPARE(after.value("ready").toInt(), 0);
    QCOMPARE(after.value("unacked").toInt(), 0);
    const Run nothingMore = cmq(QStringList{"listen", "--timeout", "1"} + receiver);
    QCOMPARE(nothingMore.exitCode, 0);
    QCOMPARE(nothingMore.out, "");
}

// cmq pads by default (docs/CLIENT.md, "Size padding"); --no-padding sends the existing
// clients' form. Read as the broker stores them, then opened by cmq listen, both.
void tst_CmqCliFeatures::paddedByDefault()
{
    // Declares and binds svc-c's queue, so that the sends below have somewhere to go.
    QCOMPARE(cmq(QStringList{"listen", "--timeout", "1"} + as("svc-c")).exitCode, 0);
    const Run padded =
        cmq(QStringList{"send", "--to", "svc-c", "short", "--timeout", "60"} + as("svc-a"));
    QVERIFY2(padded.exitCode == 0, padded.err.constData());
    const Run unpadded =
        cmq(QStringList{"send", "--to", "svc-c", "short", "--no-padding", "--timeout", "60"} +
            as("svc-a"));
    QVERIFY2(unpadded.exitCode == 0, unpadded.err.constData());

    TestClient raw("svc-c");
    QVERIFY(raw.connectTo(m_broker.port()));
    QList<QByteArray> envelopes;
    for (int i = 0; i < 2; ++i) {
        const QByteArray line = raw.request("fetch svc-c_queue");
        QVERIFY2(line.startsWith("Message: "), line.constData());
        envelopes << line.mid(line.indexOf('{'));
    }
    QVERIFY(envelopes[0].contains(R"("padding":"buckets-v1")"));
    QVERIFY(!envelopes[1].contains("padding"));
    const auto first = crypto::parseEnvelopeJson(envelopes[0]);
    const auto second = crypto::parseEnvelopeJson(envelopes[1]);
    QVERIFY(first && second);
    QCOMPARE(QByteArray::fromBase64(first->sealed.ciphertext).size(), 256 + crypto::TagSize);
    QCOMPARE(QByteArray::fromBase64(second->sealed.ciphertext).size(), 5 + crypto::TagSize);
    raw.disconnect(); // unacknowledged: both go back to the queue

    const Run received =
        cmq(QStringList{"listen", "--count", "2", "--timeout", "60"} + as("svc-c"));
    QVERIFY2(received.exitCode == 0, received.err.constData());
    QCOMPARE(received.out, "short\nshort\n");
}

void tst_CmqCliFeatures::presence()
{
    // svc-c is online before, so its line tells that the subscription is in place.
    cmq::client::BlockingClient before(clientOptions("svc-c", {m_broker.port()}));
    QVERIFY(before.connect(Patience).ok());
    LineProcess watcher;
    startCmq(watcher, QStringList{"presence", "--timeout", "60"} + as("svc-a"));
    QTRY_VERIFY_WITH_TIMEOUT(watcher.lines.contains("svc-c online"), Patience);
    {
        cmq::client::BlockingClient visitor(clientOptions("svc-b", {m_broker.port()}));
        QVERIFY(visitor.connect(Patience).ok());
        QTRY_VERIFY_WITH_TIMEOUT(watcher.lines.contains("svc-b online"), Patience);
        visitor.close(Patience);
    }
    QTRY_VERIFY_WITH_TIMEOUT(watcher.lines.contains("svc-b offline"), Patience);
    QVERIFY(watcher.lines.indexOf("svc-b online") < watcher.lines.indexOf("svc-b offline"));

    // --json and --count; an identity in no presence group is refused (exit status 1).
    const Run json =
        cmq(QStringList{"presence", "--json", "--count", "1", "--timeout", "60"} + as("svc-b"));
    QVERIFY2(json.exitCode == 0, json.err.constData());
    QCOMPARE(json.out.count('\n'), 1);
    QVERIFY2(json.out.startsWith("{\"cn\":\"svc-") && json.out.endsWith(",\"online\":true}\n"),
             json.out.constData());
    const Run refused = cmq(QStringList{"presence", "--timeout", "60"} + as("receiver_2"));
    QCOMPARE(refused.exitCode, 1);
    QVERIFY2(refused.err.contains("Permission denied"), refused.err.constData());
}

QTEST_GUILESS_MAIN(tst_CmqCliFeatures)
#include "tst_71_cmq_cli_features.moc"
