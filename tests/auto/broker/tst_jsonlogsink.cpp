// The JSON log line format and the redaction net: every line is one JSON object with the
// four fields, control characters are escaped, and messages carrying key material or a
// message envelope never reach a file. Also the files a real handler writes, by level.

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTemporaryDir>
#include <QTest>

#include "logging/jsonlogsink.h"

using cmq::logging::JsonLogSink;

Q_LOGGING_CATEGORY(lcTestSink, "ciphermq.testsink")

class tst_JsonLogSink : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void format_data();
    void format();
    void redaction_data();
    void redaction();
    void filesByLevel();
};

void tst_JsonLogSink::format_data()
{
    QTest::addColumn<int>("type");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("level");
    QTest::newRow("info") << int(QtInfoMsg) << "connection 1: sender_1"
                          << "info";
    QTest::newRow("debug") << int(QtDebugMsg) << "x"
                           << "debug";
    QTest::newRow("warning") << int(QtWarningMsg) << "line too long"
                             << "warn";
    QTest::newRow("critical") << int(QtCriticalMsg) << "storage down"
                              << "error";
    QTest::newRow("control chars") << int(QtInfoMsg) << "a\nb\t\"c\"\x01"
                                   << "info";
    QTest::newRow("unicode") << int(QtInfoMsg) << QStringLiteral("صف پیام") << "info";
}

void tst_JsonLogSink::format()
{
    QFETCH(int, type);
    QFETCH(QString, message);
    QFETCH(QString, level);
    const QDateTime at(QDate(2025, 1, 31), QTime(10, 0, 0, 123), Qt::UTC);
    const QByteArray line =
        JsonLogSink::formatJson(QtMsgType(type), "ciphermq.broker", message, at);
    QVERIFY(line.endsWith('\n'));
    QCOMPARE(line.count('\n'), 1); // one line, whatever the message holds
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
    QCOMPARE(error.error, QJsonParseError::NoError);
    const QJsonObject o = doc.object();
    QCOMPARE(o.size(), 4);
    QCOMPARE(o.value(QStringLiteral("timestamp")).toString(),
             QStringLiteral("2025-01-31T10:00:00.123Z"));
    QCOMPARE(o.value(QStringLiteral("level")).toString(), level);
    QCOMPARE(o.value(QStringLiteral("target")).toString(), QStringLiteral("ciphermq.broker"));
    QCOMPARE(o.value(QStringLiteral("message")).toString(), message);
}

void tst_JsonLogSink::redaction_data()
{
    QTest::addColumn<QString>("message");
    QTest::addColumn<bool>("redacted");
    QTest::newRow("ordinary") << "refused 127.0.0.1: no role" << false;
    QTest::newRow("pem key") << "loaded -----BEGIN PRIVATE KEY-----\nMIGH..." << true;
    QTest::newRow("rsa key") << "-----BEGIN RSA PRIVATE KEY-----" << true;
    QTest::newRow("ec key") << "key -----BEGIN EC PRIVATE KEY-----" << true;
    QTest::newRow("envelope") << R"(bad {"message_id":"m","ciphertext":"Y2lw"})" << true;
    QTest::newRow("session key") << R"({"enc_session_key":"ZW5j"})" << true;
    QTest::newRow("the word alone") << "ciphertext field missing" << false;
}

void tst_JsonLogSink::redaction()
{
    QFETCH(QString, message);
    QFETCH(bool, redacted);
    const QString out = JsonLogSink::redact(message);
    QCOMPARE(out != message, redacted);
    if (redacted)
        QVERIFY(out.startsWith(QLatin1String("[redacted: ")));
}

void tst_JsonLogSink::filesByLevel()
{
    QTemporaryDir dir;
    cmq::Config::Logging logging;
    logging.infoFilePath = dir.filePath(QStringLiteral("logs/info.log"));
    logging.debugFilePath = dir.filePath(QStringLiteral("logs/debug.log"));
    logging.errorFilePath = dir.filePath(QStringLiteral("logs/error.log"));
    QLoggingCategory::setFilterRules(QStringLiteral("ciphermq.testsink.debug=true"));
    QVERIFY(JsonLogSink::install(logging));
    qCDebug(lcTestSink, "a debug line");
    qCInfo(lcTestSink, "an info line");
    qCWarning(lcTestSink, "a warning");
    qCCritical(lcTestSink, "an error");
    JsonLogSink::uninstall();
    const auto levels = [&](const char *name) {
        QFile f(dir.filePath(QStringLiteral("logs/") + QLatin1String(name)));
        if (!f.open(QIODevice::ReadOnly))
            return QStringList{QStringLiteral("<missing>")};
        QStringList out;
        for (const QByteArray &line : f.readAll().split('\n')) {
            if (!line.isEmpty())
                out.append(QJsonDocument::fromJson(line)
                               .object()
                               .value(QStringLiteral("level"))
                               .toString());
        }
        return out;
    };
    QCOMPARE(levels("debug.log"), (QStringList{"debug", "info", "warn", "error"}));
    QCOMPARE(levels("info.log"), (QStringList{"info", "warn", "error"}));
    QCOMPARE(levels("error.log"), (QStringList{"error"}));
}

QTEST_GUILESS_MAIN(tst_JsonLogSink)
#include "tst_jsonlogsink.moc"
