// The cmq binary as scripts use it: --help on every subcommand and its words, usage errors and
// unreachable brokers reported as one stderr line with the documented exit status, keygen,
// send/listen, request/reply-echo, publish of a raw envelope, declare, a config file, and the
// on-disk outbox keeping an undeliverable message for the next run. Listening under a rate
// limit, padding and presence are in tst_71_cmq_cli_features; the set-up both share is
// cmqclitest.h.

#include <sys/stat.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "cmqclitest.h"
#include "crypto/envelopecrypto.h"
#include "crypto/keypair.h"

using namespace cmq::test;
namespace crypto = cmq::crypto;

class tst_CmqCli : public QObject, public CmqCliTest
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { setUpCmqCli(); }
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
};

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

QTEST_GUILESS_MAIN(tst_CmqCli)
#include "tst_24_cmq_cli.moc"
