// The cmq binary as scripts use it: --help on every subcommand and its words, usage errors and
// unreachable brokers reported as one stderr line with the documented exit status, keygen,
// send/listen, request/reply-echo, publish of a raw envelope, declare, a config file, and the
// on-disk outbox keeping an undeliverable message for the next run.

#include <sys/stat.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "brokerprocess.h"
#include "client/blockingclient.h"
#include "clienttest.h"
#include "crypto/envelopecrypto.h"
#include "crypto/keypair.h"
#include "processrun.h"
#include "testclient.h"

using namespace cmq::test;
namespace crypto = cmq::crypto;

namespace {

constexpr int Patience = 60000;

using Run = ProcessRun;

} // namespace

class tst_CmqCli : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void helpEverywhere();
    void usageErrors_data();
    void usageErrors();
    void keygen();
    void unreachableOrRefused_data();
    void unreachableOrRefused();
    void sendAndListen();
    void requestAndReplyEcho();
    void publishRawEnvelope();
    void declareAndConfigFile();
    void outboxKeepsWhatCannotBeDelivered();
    void requestTimesOut();
    void listenDrainsBacklogUnderRateLimit();
    void paddedByDefault();
    void presence();

private:
    Run cmq(const QStringList &args, const QByteArray &input = {}, int timeoutMs = Patience);
    void startCmq(LineProcess &process, const QStringList &args);
    QStringList as(const QString &identity) const;
    QString identity(const QString &name) const { return m_dir.filePath("id-" + name); }

    QTemporaryDir m_dir;
    BrokerProcess m_broker;
    QProcessEnvironment m_env;
};

void tst_CmqCli::initTestCase()
{
    m_broker.set("acl.presence_groups", R"([["svc-a", "svc-b", "svc-c"]])");
    m_broker.set("acl.presence_debounce_ms", "200");
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    // No user config, no CMQ_* settings from the environment of whoever runs the tests.
    m_env = QProcessEnvironment::systemEnvironment();
    for (const QString &key : m_env.keys())
        if (key.startsWith("CMQ_"))
            m_env.remove(key);
    m_env.insert("HOME", m_dir.filePath("home"));
    for (const QString name : {"svc-a", "svc-b", "svc-c", "receiver_2"})
        QCOMPARE(cmq({"keygen", "--identity", identity(name)}).exitCode, 0);
}

Run tst_CmqCli::cmq(const QStringList &args, const QByteArray &input, int timeoutMs)
{
    return runProcess(QStringLiteral(CMQ_CLI_BIN), args, m_env, input, timeoutMs);
}

void tst_CmqCli::startCmq(LineProcess &process, const QStringList &args)
{
    process.process.setProcessEnvironment(m_env);
    process.start(QStringLiteral(CMQ_CLI_BIN), args);
}

QStringList tst_CmqCli::as(const QString &name) const
{
    return cmqConnection(name, {m_broker.port()}) +
           QStringList{"--identity", identity(name), "--connect-timeout", "20"};
}

void tst_CmqCli::helpEverywhere()
{
    const Run top = cmq({"--help"});
    QCOMPARE(top.exitCode, 0);
    // The commands `cmq --help` lists: "  name   summary" lines after "Commands:".
    QStringList listed;
    const QList<QByteArray> lines = top.out.split('\n');
    for (qsizetype i = lines.indexOf("Commands:") + 1; i > 0 && i < lines.size(); ++i) {
        if (!lines[i].startsWith("  "))
            break;
        listed << QString::fromUtf8(lines[i].trimmed().split(' ').constFirst());
    }
    // Each command with the words that may follow it; --help must work after any of them.
    const QMap<QString, QStringList> commands{
        {"admin",
         {"metrics", "json", "queues", "exchanges", "bindings", "connections", "ratelimits",
          "purge", "delete_queue", "disconnect", "reload", "watch", "help"}},
        {"certs", {"init-ca", "server", "client"}},
        {"declare", {"queue", "exchange", "bind"}},
        {"keygen", {}},
        {"listen", {}},
        {"presence", {}},
        {"publish", {}},
        {"reply-echo", {}},
        {"request", {}},
        {"send", {}},
    };
    QCOMPARE(listed, commands.keys()); // a new command needs its rows here
    for (auto it = commands.cbegin(); it != commands.cend(); ++it) {
        const QString &command = it.key();
        const QByteArray usage = "Usage: cmq " + command.toUtf8();
        for (const QString &word : QStringList{QString()} + it.value()) {
            const QStringList args = word.isEmpty() ? QStringList{command, "--help"}
                                                    : QStringList{command, word, "--help"};
            const Run help = cmq(args);
            const QByteArray what = args.join(u' ').toUtf8() + ": " + help.out + help.err;
            QVERIFY2(help.exitCode == 0, what.constData());
            QVERIFY2(help.out.startsWith(usage), what.constData());
            QVERIFY2(help.out.contains("Exit status"), what.constData());
            QVERIFY2(word.isEmpty() || help.out.contains(word.toUtf8()), what.constData());
            QVERIFY2(help.err.isEmpty(), what.constData());
        }
    }
    // -h and the `help` word give the same text as --help where a command knows them.
    for (const QStringList &args :
         {QStringList{"admin", "-h"}, QStringList{"certs", "-h"}, QStringList{"certs", "help"}}) {
        const Run help = cmq(args);
        QCOMPARE(help.exitCode, 0);
        QCOMPARE(help.out, cmq({args.first(), "--help"}).out);
    }
}

void tst_CmqCli::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QByteArray>("expected"); // part of the one stderr line
    QTest::addColumn<bool>("connected");      // give the connection flags
    QTest::newRow("send without --to")
        << QStringList{"send", "hi"} << QByteArray("--to NAME is required") << true;
    QTest::newRow("send without text")
        << QStringList{"send", "--to", "svc-b"} << QByteArray("nothing to send") << true;
    QTest::newRow("send two texts")
        << QStringList{"send", "--to", "svc-b", "a", "b"} << QByteArray("one argument") << true;
    QTest::newRow("unknown option")
        << QStringList{"send", "--bogus"} << QByteArray("bogus") << true;
    QTest::newRow("bad timeout") << QStringList{"send", "--to", "svc-b", "--timeout", "soon", "x"}
                                 << QByteArray("--timeout") << true;
    QTest::newRow("no broker") << QStringList{"send", "--to", "svc-b", "hi"}
                               << QByteArray("no broker given") << false;
    QTest::newRow("bad broker list")
        << QStringList{"send", "--to", "svc-b", "--broker", "a:0", "hi"} << QByteArray("port")
        << false;
    QTest::newRow("listen bad count")
        << QStringList{"listen", "--count", "x"} << QByteArray("--count") << true;
    QTest::newRow("request without text")
        << QStringList{"request", "--to", "svc-b"} << QByteArray("request text") << true;
    QTest::newRow("publish without exchange")
        << QStringList{"publish", "-"} << QByteArray("--exchange") << true;
    QTest::newRow("declare what") << QStringList{"declare", "queue"} << QByteArray("expected")
                                  << true;
    QTest::newRow("keygen extra") << QStringList{"keygen", "now"}
                                  << QByteArray("unexpected argument") << false;
}

void tst_CmqCli::usageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QByteArray, expected);
    QFETCH(bool, connected);
    const Run run = cmq(connected ? args + as("svc-a") : args);
    QCOMPARE(run.exitCode, 2);
    QCOMPARE(run.errLines().size(), 1);
    QVERIFY2(run.err.startsWith("cmq " + args.first().toUtf8() + ": "), run.err.constData());
    QVERIFY2(run.err.contains(expected), run.err.constData());
    QVERIFY(run.out.isEmpty());
}

void tst_CmqCli::keygen()
{
    const QString dir = m_dir.filePath("fresh");
    const Run made = cmq({"keygen", "--identity", dir});
    QCOMPARE(made.exitCode, 0);
    const auto publicKey = crypto::publicKeyFromBase64(made.out.trimmed());
    QVERIFY2(publicKey.ok(), made.out.constData());
    const QString keyFile = dir + "/x25519.key";
    struct stat info
    {
    };
    QCOMPARE(::stat(QFile::encodeName(keyFile).constData(), &info), 0);
    QCOMPARE(int(info.st_mode & 0777), 0600);
    QCOMPARE(crypto::loadKeyPair(keyFile).value().publicKey, publicKey.value());

    const Run again = cmq({"keygen", "--identity", dir});
    QCOMPARE(again.exitCode, 1);
    QCOMPARE(again.errLines().size(), 1);
    QVERIFY(again.err.contains("--force"));
    const Run forced = cmq({"keygen", "--identity", dir, "--force"});
    QCOMPARE(forced.exitCode, 0);
    QVERIFY(forced.out != made.out);
}

void tst_CmqCli::unreachableOrRefused_data()
{
    QTest::addColumn<QString>("identityName");
    QTest::addColumn<bool>("reachable");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("nothing listens") << "svc-a" << false << QByteArray("no broker reachable");
    QTest::newRow("CN without a role") << "stranger" << true << QByteArray("has no role");
}

void tst_CmqCli::unreachableOrRefused()
{
    QFETCH(QString, identityName);
    QFETCH(bool, reachable);
    QFETCH(QByteArray, expected);
    const quint16 port = reachable ? m_broker.port() : freePort();
    QElapsedTimer timer;
    timer.start();
    const Run run = cmq(QStringList{"send", "--to", "svc-b", "hello", "--connect-timeout", "2"} +
                        cmqConnection(identityName, {port}));
    QCOMPARE(run.exitCode, 3);
    QCOMPARE(run.errLines().size(), 1);
    QVERIFY2(run.err.startsWith("cmq send: "), run.err.constData());
    QVERIFY2(run.err.contains(expected), run.err.constData());
    QVERIFY(timer.elapsed() < 20000);
}

void tst_CmqCli::sendAndListen()
{
    LineProcess listener;
    startCmq(listener,
             QStringList{"listen", "--json", "--count", "3", "--timeout", "60"} + as("svc-b"));
    // The sender may be first: its message waits until svc-b has a key and a queue.
    const Run single =
        cmq(QStringList{"send", "--to", "svc-b", "hello from a script"} + as("svc-a"));
    QVERIFY2(single.exitCode == 0, single.err.constData());
    const QByteArray firstId = single.out.trimmed();
    QVERIFY(firstId.startsWith("svc-a-") && firstId.endsWith("-svc-b"));
    const Run lines = cmq(QStringList{"send", "--to", "svc-b", "--lines", "-"} + as("svc-a"),
                          "line one\nline two\n");
    QVERIFY2(lines.exitCode == 0, lines.err.constData());
    QCOMPARE(lines.out.trimmed().split('\n').size(), 2);

    QVERIFY2(listener.finished(Patience), listener.errors().constData());
    QCOMPARE(listener.process.exitCode(), 0);
    QCOMPARE(listener.lines.size(), 3);
    QSet<QString> payloads;
    for (const QByteArray &line : std::as_const(listener.lines)) {
        const QJsonObject object = QJsonDocument::fromJson(line).object();
        QCOMPARE(object.value("from").toString(), "svc-a");
        QCOMPARE(object.value("kind").toString(), "message");
        QVERIFY(object.value("sent_time").toString().endsWith('Z'));
        // What the broker attests: the certificate it was published with, and when.
        QCOMPARE(object.value("sender").toString(), "svc-a");
        QVERIFY(object.value("published_at").toString().endsWith('Z'));
        QCOMPARE(object.value("delivery_count").toInt(), 1);
        QVERIFY(!object.contains("dead_letter_reason"));
        payloads.insert(object.value("payload").toString());
    }
    QCOMPARE(payloads, (QSet<QString>{"hello from a script", "line one", "line two"}));
    QCOMPARE(
        QJsonDocument::fromJson(listener.lines.first()).object().value("id").toString().toUtf8(),
        firstId);
}

void tst_CmqCli::requestAndReplyEcho()
{
    LineProcess responder;
    startCmq(responder,
             QStringList{"reply-echo", "--count", "1", "--prefix", "echo: ", "--timeout", "60"} +
                 as("svc-c"));
    const Run reply =
        cmq(QStringList{"request", "--to", "svc-c", "ping", "--timeout", "60"} + as("svc-a"));
    QVERIFY2(reply.exitCode == 0, reply.err.constData());
    QCOMPARE(reply.out, "echo: ping\n");
    QVERIFY2(responder.finished(Patience), responder.errors().constData());
    QCOMPARE(responder.process.exitCode(), 0);
    QCOMPARE(responder.lines.size(), 1);
    QVERIFY(responder.lines.first().startsWith("svc-a-"));
}

void tst_CmqCli::publishRawEnvelope()
{
    // An envelope made outside cmq (as another client would), published as it is.
    const auto svcC = crypto::loadKeyPair(identity("svc-c") + "/x25519.key");
    QVERIFY(svcC.ok());
    const auto sealed = crypto::seal("raw envelope text", svcC->publicKey);
    const QString id = "svc-a-raw-1-svc-c";
    QFile file(m_dir.filePath("envelope.json"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(crypto::buildEnvelopeJson(id, "svc-c", sealed.value(),
                                         QDateTime::currentDateTimeUtc(), {{"x-note", "kept"}}));
    file.close();
    const QStringList publish{"publish",       "--exchange", "CipherMQ_exchange",
                              "--routing-key", "svc-c_key",  file.fileName()};
    const Run published = cmq(publish + as("svc-a"));
    QVERIFY2(published.exitCode == 0, published.err.constData());
    QCOMPARE(published.out, id.toUtf8() + '\n');
    // Again: the broker has it already, which confirms it; it is not delivered twice.
    const Run again = cmq(publish + as("svc-a"));
    QVERIFY2(again.exitCode == 0, again.err.constData());

    const Run received =
        cmq(QStringList{"listen", "--count", "1", "--timeout", "60"} + as("svc-c"));
    QVERIFY2(received.exitCode == 0, received.err.constData());
    QCOMPARE(received.out, "raw envelope text\n");
    const Run nothingMore = cmq(QStringList{"listen", "--timeout", "1"} + as("svc-c"));
    QCOMPARE(nothingMore.exitCode, 0);
    QCOMPARE(nothingMore.out, "");

    const Run broken = cmq(QStringList{"publish", "--exchange", "CipherMQ_exchange",
                                       "--routing-key", "svc-c_key", "-"} +
                               as("svc-a"),
                           "{not json");
    QCOMPARE(broken.exitCode, 1);
    QCOMPARE(broken.errLines().size(), 1);
    QVERIFY2(broken.err.contains("not an envelope"), broken.err.constData());
}

void tst_CmqCli::declareAndConfigFile()
{
    const auto declare = [&](const QStringList &what) {
        return cmq(QStringList{"declare"} + what + as("svc-b"));
    };
    Run run = declare({"exchange", "cli_exchange"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QCOMPARE(run.out, "Exchange declared\n");
    run = declare({"queue", "svc-b_cli"});
    QCOMPARE(run.out, "Queue declared\n");
    run = declare({"bind", "svc-b_cli", "cli_exchange", "svc-b_cli"});
    QCOMPARE(run.out, "Queue bound\n");
    run = declare({"queue", "someone_elses"});
    QCOMPARE(run.exitCode, 1);
    QCOMPARE(run.errLines().size(), 1);
    QVERIFY2(run.err.contains("Permission denied"), run.err.constData());

    // The same settings from a config file; relative paths are relative to the file.
    const QString configDir = m_dir.filePath("conf");
    QVERIFY(QDir().mkpath(configDir));
    QVERIFY(QFile::copy(certFile("svc-b.crt"), configDir + "/me.crt"));
    QVERIFY(QFile::copy(certFile("svc-b.key"), configDir + "/me.key"));
    QFile config(configDir + "/client.toml");
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(QStringLiteral("[client]\nbrokers = [\"127.0.0.1:%1\"]\ncert = \"me.crt\"\n"
                                "key = \"me.key\"\nca = \"%2\"\n")
                     .arg(m_broker.port())
                     .arg(certFile("ca.crt"))
                     .toUtf8());
    config.close();
    run = cmq({"declare", "--config", config.fileName(), "queue", "svc-b_from_config"});
    QVERIFY2(run.exitCode == 0, run.err.constData());
    QCOMPARE(run.out, "Queue declared\n");
    m_env.insert("CMQ_CONFIG", config.fileName());
    run = cmq({"declare", "queue", "svc-b_from_env"});
    m_env.remove("CMQ_CONFIG");
    QVERIFY2(run.exitCode == 0, run.err.constData());
}

void tst_CmqCli::outboxKeepsWhatCannotBeDelivered()
{
    // receiver_2 has never been seen by this broker: no key, no queue. The message waits in the
    // on-disk outbox, and a later run delivers it.
    const QString outbox = m_dir.filePath("outbox");
    const Run waiting = cmq(QStringList{"send", "--to", "receiver_2", "for later", "--timeout", "2",
                                        "--outbox", outbox} +
                            as("svc-a"));
    QCOMPARE(waiting.exitCode, 1);
    QCOMPARE(waiting.errLines().size(), 1);
    QVERIFY2(waiting.err.contains("kept in " + outbox.toUtf8()), waiting.err.constData());
    QCOMPARE(QDir(outbox).entryList({"*.msg"}, QDir::Files).size(), 1);

    LineProcess listener;
    startCmq(listener, QStringList{"listen", "--count", "1", "--timeout", "60"} + as("receiver_2"));
    const Run flushed =
        cmq(QStringList{"send", "--outbox", outbox, "--timeout", "60"} + as("svc-a"));
    QVERIFY2(flushed.exitCode == 0, flushed.err.constData());
    QVERIFY(flushed.out.startsWith("svc-a-") && flushed.out.trimmed().endsWith("-receiver_2"));
    QVERIFY2(listener.finished(Patience), listener.errors().constData());
    QCOMPARE(listener.lines, QList<QByteArray>{"for later"});
    QCOMPARE(QDir(outbox).entryList({"*.msg"}, QDir::Files).size(), 0);
}

void tst_CmqCli::requestTimesOut()
{
    // svc-b has a key and a queue (sendAndListen) but nobody consumes it now.
    const Run run =
        cmq(QStringList{"request", "--to", "svc-b", "anyone?", "--timeout", "1"} + as("svc-a"));
    QCOMPARE(run.exitCode, 1);
    QCOMPARE(run.errLines().size(), 1);
    QVERIFY2(run.err.contains("no reply from svc-b within 1000 ms"), run.err.constData());
    QVERIFY(run.out.isEmpty());
}

void tst_CmqCli::listenDrainsBacklogUnderRateLimit()
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
void tst_CmqCli::paddedByDefault()
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

void tst_CmqCli::presence()
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

QTEST_GUILESS_MAIN(tst_CmqCli)
#include "tst_24_cmq_cli.moc"
