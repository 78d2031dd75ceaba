// The broker's log files against the real broker: the three files appear at the configured
// paths (directories created), every line is one JSON object with timestamp, level, target
// and message, each file holds its levels, a file rotates when it reaches logging.max_size_mb,
// and no payload (envelope) or private key ever reaches a log, even at debug level.

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"

using cmq::test::BrokerProcess;
using cmq::test::certFile;
using cmq::test::freePort;
using cmq::test::TestClient;

namespace {

QString quoted(const QString &text)
{
    return u'"' + text + u'"';
}

// A ciphertext no log line may ever contain.
const QByteArray kSecret = QByteArray("CIPHERMQ-SECRET-PAYLOAD-MARKER").toBase64();

QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":")" +
           kSecret + R"("})";
}

struct Parsed
{
    int lines = 0;
    QSet<QString> levels;
    QSet<QString> targets;
    QString problem; // the first line that is not a valid log object
};

Parsed parseLog(const QByteArray &text)
{
    Parsed p;
    const QList<QByteArray> lines = text.split('\n');
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QByteArray &line = lines[i];
        if (line.isEmpty()) {
            if (i != lines.size() - 1 && p.problem.isEmpty())
                p.problem = QStringLiteral("empty line %1").arg(i);
            continue;
        }
        ++p.lines;
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
        const QJsonObject o = doc.object();
        const bool valid =
            error.error == QJsonParseError::NoError && doc.isObject() && o.size() == 4 &&
            o.value("message").isString() &&
            QDateTime::fromString(o.value("timestamp").toString(), Qt::ISODateWithMs).isValid() &&
            o.value("timestamp").toString().endsWith(u'Z');
        if (!valid && p.problem.isEmpty())
            p.problem = QString::fromUtf8(line);
        p.levels.insert(o.value("level").toString());
        p.targets.insert(o.value("target").toString());
    }
    return p;
}

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class tst_Logging : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void filesAtConfiguredPaths();
    void linesAreJsonByLevel();
    void rotatesAtMaxSize();
    void noPayloadOrKeyInLogs();
    void unwritableLogPathStopsStart();
    void consoleFilteredByLevelOrRules();

private:
    QString path(const char *name) const { return m_broker.dataDir() + QLatin1String(name); }

    BrokerProcess m_broker;
    quint16 m_adminPort = 0;
};

void tst_Logging::initTestCase()
{
    m_adminPort = freePort();
    m_broker.set("admin.enabled", "true");
    m_broker.set("admin.address", quoted(QStringLiteral("127.0.0.1:%1").arg(m_adminPort)));
    m_broker.set("logging.level", quoted("debug"));
    m_broker.set("logging.rotation", quoted("daily"));
    m_broker.set("logging.max_size_mb", "1");
    m_broker.set("logging.max_files", "5");
    // Three different directories, none of which exists yet.
    m_broker.set("logging.info_file_path", quoted(path("/var/info/broker-info.log")));
    m_broker.set("logging.debug_file_path", quoted(path("/var/debug/broker-debug.log")));
    m_broker.set("logging.error_file_path", quoted(path("/var/error/broker-error.log")));
    QVERIFY2(m_broker.start(), m_broker.output().constData());

    // Traffic at every level the broker uses: connections, refusals, publishes, deliveries.
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(m_broker.port()));
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("declare_queue receiver_1_logs"), "Queue declared");
    QCOMPARE(receiver.request("bind receiver_1_logs CipherMQ_exchange receiver_1_logs"),
             "Queue bound");
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(m_broker.port()));
    for (int i = 0; i < 5; ++i) {
        const QByteArray id = "log-" + QByteArray::number(i);
        QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_logs " + envelope(id)),
                 "ACK " + id);
    }
    // Malformed publishes, whose text might tempt a log line to quote them.
    QVERIFY(sender
                .request("publish CipherMQ_exchange receiver_1_logs {\"ciphertext\":\"" + kSecret +
                         "\"}")
                .startsWith("Invalid message format: "));
    QVERIFY(sender.request("publish CipherMQ_exchange nobody_key " + envelope("log-x"))
                .startsWith("Error: No queues bound"));
    QCOMPARE(receiver.request("consume receiver_1_logs"), "Subscribed to queue");
    for (int i = 0; i < 5; ++i)
        QVERIFY(receiver.readLine().startsWith("Message: log-"));
    sender.sendRaw(QByteArray(5000, 'x') + "\n"); // fine: under the line limit
    QCOMPARE(sender.readLine(), "Unknown command");
    TestClient stranger("stranger");
    QVERIFY(stranger.connectTo(m_broker.port()));
    QVERIFY(stranger.readLine().startsWith("Error: Unauthorized"));
}

void tst_Logging::cleanupTestCase()
{
    QVERIFY(m_broker.terminate());
    QCOMPARE(m_broker.exitCode(), 0);
}

void tst_Logging::filesAtConfiguredPaths()
{
    for (const char *name : {"/var/info/broker-info.log", "/var/debug/broker-debug.log",
                             "/var/error/broker-error.log"})
        QVERIFY2(QFile::exists(path(name)), name);
    // Nothing at the defaults.
    QVERIFY(!QFile::exists(m_broker.dataDir() + QStringLiteral("/logs/info.log")));
}

void tst_Logging::linesAreJsonByLevel()
{
    const Parsed debug = parseLog(readAll(path("/var/debug/broker-debug.log")));
    QVERIFY2(debug.problem.isEmpty(), qPrintable(debug.problem));
    QVERIFY(debug.levels.contains(QStringLiteral("debug")));
    QVERIFY(debug.levels.contains(QStringLiteral("info")));
    QVERIFY2(debug.targets.contains(QStringLiteral("ciphermq.broker")),
             qPrintable(QStringList(debug.targets.values()).join(u',')));
    QVERIFY(debug.targets.contains(QStringLiteral("ciphermq.tls")));

    const Parsed info = parseLog(readAll(path("/var/info/broker-info.log")));
    QVERIFY2(info.problem.isEmpty(), qPrintable(info.problem));
    QVERIFY(info.lines > 0);
    QVERIFY(info.levels.contains(QStringLiteral("info")));
    QVERIFY(!info.levels.contains(QStringLiteral("debug")));
    QVERIFY(info.lines < debug.lines);

    const Parsed error = parseLog(readAll(path("/var/error/broker-error.log")));
    QVERIFY2(error.problem.isEmpty(), qPrintable(error.problem));
    for (const QString &level : error.levels)
        QVERIFY2(level == QLatin1String("error") || level == QLatin1String("fatal"),
                 qPrintable(level));
}

void tst_Logging::rotatesAtMaxSize()
{
    // Every admin command is logged at info (an audit trail): 12,000 of them are well over
    // the 1 MiB limit of each file.
    TestClient admin("ops-admin");
    QVERIFY(admin.connectTo(m_adminPort));
    // In rounds, draining the broker's console output in between: it is a pipe to this test,
    // and a full pipe would block the broker's logging (as it would any program's).
    QByteArray round;
    for (int i = 0; i < 300; ++i)
        round += "help\n";
    for (int r = 0; r < 40; ++r) {
        admin.sendRaw(round);
        for (int i = 0; i < 300; ++i) {
            const QByteArray line = admin.readLine();
            QVERIFY2(line.startsWith("{\"commands\":"),
                     qPrintable(QStringLiteral("round %1, reply %2: %3")
                                    .arg(r)
                                    .arg(i)
                                    .arg(QString::fromUtf8(line))));
        }
        QTest::qWait(50); // lets QProcess read the pipe
        m_broker.output();
    }
    const QString day = QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyy-MM-dd"));
    for (const char *name : {"/var/info/broker-info.log", "/var/debug/broker-debug.log"}) {
        const QString live = path(name);
        const QDir dir = QFileInfo(live).absoluteDir();
        const QStringList rotated =
            dir.entryList({QFileInfo(live).fileName() + ".*"}, QDir::Files, QDir::Name);
        QVERIFY2(!rotated.isEmpty(), name);
        QVERIFY2(rotated.first().startsWith(QFileInfo(live).fileName() + u'.' + day),
                 qPrintable(rotated.first()));
        QVERIFY(QFileInfo(live).size() <= 1024 * 1024);
        for (const QString &file : rotated) {
            const QByteArray text = readAll(dir.filePath(file));
            QVERIFY(text.size() <= 1024 * 1024);
            QVERIFY(text.size() > 900 * 1024); // it rotated because it was full
            const Parsed parsed = parseLog(text);
            QVERIFY2(parsed.problem.isEmpty(), qPrintable(parsed.problem));
        }
    }
}

void tst_Logging::noPayloadOrKeyInLogs()
{
    QByteArray all = m_broker.output(); // the console log
    for (const QString &dir : {path("/var/info"), path("/var/debug"), path("/var/error")}) {
        for (const QFileInfo &f : QDir(dir).entryInfoList(QDir::Files))
            all += readAll(f.absoluteFilePath());
    }
    QVERIFY(all.size() > 1000);
    QVERIFY(!all.contains(kSecret));
    QVERIFY(!all.contains("PRIVATE KEY"));
    QVERIFY(!all.contains("enc_session_key"));
    // Not even a piece of the server's key.
    const QList<QByteArray> keyLines = readAll(certFile("server.key")).split('\n');
    QVERIFY(keyLines.size() > 3);
    QVERIFY(!all.contains(keyLines.at(1)));
}

void tst_Logging::unwritableLogPathStopsStart()
{
    BrokerProcess broker;
    QFile blocker(broker.dataDir() + QStringLiteral("/blocker"));
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    broker.set("logging.error_file_path", quoted(blocker.fileName() + QStringLiteral("/e.log")));
    QVERIFY(!broker.start(15000));
    QVERIFY2(broker.output().contains("cannot open the log files: cannot create the directory of "),
             broker.output().constData());
    QCOMPARE(broker.exitCode(), 1);
}

void tst_Logging::consoleFilteredByLevelOrRules()
{
    // logging.level = "warn": the console shows no info lines of ours.
    BrokerProcess quiet;
    quiet.set("logging.level", quoted(QStringLiteral("warn")));
    QVERIFY2(quiet.start(), quiet.output().constData());
    QVERIFY(quiet.terminate());
    QVERIFY2(!quiet.output().contains(" INFO  ciphermq."), quiet.output().constData());

    // QT_LOGGING_RULES, when set, replaces what logging.level would choose: here one category's
    // info lines come back while the others stay off.
    qputenv("QT_LOGGING_RULES", "ciphermq.*.info=false\nciphermq.storage.info=true");
    BrokerProcess ruled;
    ruled.set("logging.level", quoted(QStringLiteral("warn")));
    const bool started = ruled.start();
    qunsetenv("QT_LOGGING_RULES");
    QVERIFY2(started, ruled.output().constData());
    QVERIFY(ruled.terminate());
    QVERIFY2(ruled.output().contains(" INFO  ciphermq.storage: recovered "),
             ruled.output().constData());
    QVERIFY2(!ruled.output().contains(" INFO  ciphermq.router: "), ruled.output().constData());
}

QTEST_GUILESS_MAIN(tst_Logging)
#include "tst_14_logging.moc"
