// The ciphermq-broker command line as an operator uses it: --version, --help, and
// --check-config, which exits 0 on a valid file, warns about unknown keys without failing, and
// reports each invalid value — including a TLS key the broker's user cannot read — as one stderr
// line naming the file, the key and the problem, with a non-zero exit.

#include <pwd.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "brokerprocess.h"
#include "processrun.h"
#include "testenv.h"

using cmq::test::BrokerProcess;
using cmq::test::certFile;
using cmq::test::ProcessRun;
using cmq::test::runProcess;

namespace {

// `prefix` runs the broker through another program (setpriv), whose arguments come first.
ProcessRun runBroker(const QStringList &args, const QString &binary = BrokerProcess::brokerBinary(),
                     const QStringList &prefix = {})
{
    if (prefix.isEmpty())
        return runProcess(binary, args);
    return runProcess(prefix.first(), prefix.mid(1) + QStringList{binary} + args);
}

QString quoted(const QString &text)
{
    return u'"' + text + u'"';
}

QByteArray invalid(const QString &configPath, const QString &problem)
{
    return QStringLiteral("ciphermq-broker: invalid configuration: %1: %2\n")
        .arg(configPath, problem)
        .toUtf8();
}

bool copyWithMode(const QString &from, const QString &to, QFile::Permissions mode)
{
    return QFile::copy(from, to) && QFile::setPermissions(to, mode);
}

} // namespace

class tst_BrokerCli : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void version();
    void help();
    void checkValidConfig();
    void checkInvalidValue_data();
    void checkInvalidValue();
    void checkMissingConfigFile();
    void checkUnknownKey();
    void checkUnreadableKeyFile();
};

void tst_BrokerCli::version()
{
    const ProcessRun run = runBroker({"--version"});
    QCOMPARE(run.exitCode, 0);
    QCOMPARE(run.out, QByteArray("ciphermq-broker " CIPHERMQ_VERSION "\n"));
    QCOMPARE(run.err, QByteArray());
}

void tst_BrokerCli::help()
{
    const ProcessRun run = runBroker({"--help"});
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.out.startsWith("Usage: "), run.out.constData());
    for (const char *option : {"--config <path>", "--check-config", "--version", "--help"})
        QVERIFY2(run.out.contains(option), option);
    QCOMPARE(run.err, QByteArray());
}

void tst_BrokerCli::checkValidConfig()
{
    const BrokerProcess broker;
    const QString path = broker.writeConfig();
    const QByteArray ok = path.toUtf8() + ": configuration OK\n";
    // Both spellings: the file as --config, and as the argument of --check-config.
    for (const QStringList &args :
         {QStringList{"--check-config", "--config", path}, QStringList{"--check-config", path}}) {
        const ProcessRun run = runBroker(args);
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.out, ok);
        QCOMPARE(run.err, QByteArray());
    }
}

void tst_BrokerCli::checkInvalidValue_data()
{
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");   // TOML text
    QTest::addColumn<QString>("problem"); // after "<file>: "
    QTest::newRow("database port out of range")
        << "database.port"
        << "70000"
        << "database.port: must be between 1 and 65535 (got 70000)";
    QTest::newRow("listen port out of range")
        << "server.address" << quoted("127.0.0.1:70000")
        << "server.address: port \"70000\" is not a number between 1 and 65535 "
           "(got \"127.0.0.1:70000\")";
    QTest::newRow("unknown driver")
        << "database.driver" << quoted("mysql")
        << "database.driver: must be one of \"postgresql\", \"sqlite\" (got \"mysql\")";
    QTest::newRow("missing key file")
        << "tls.key_path" << quoted("/nonexistent/server.key")
        << "tls.key_path: cannot read \"/nonexistent/server.key\": No such file or directory";
}

void tst_BrokerCli::checkInvalidValue()
{
    QFETCH(QString, key);
    QFETCH(QString, value);
    QFETCH(QString, problem);
    BrokerProcess broker;
    broker.set(key, value);
    const QString path = broker.writeConfig();
    const ProcessRun run = runBroker({"--check-config", "--config", path});
    QCOMPARE(run.exitCode, 2);
    QCOMPARE(run.err, invalid(path, problem));
    QCOMPARE(run.out, QByteArray());
}

void tst_BrokerCli::checkMissingConfigFile()
{
    const QTemporaryDir dir;
    const QString path = dir.filePath("absent.toml");
    const ProcessRun run = runBroker({"--check-config", path});
    QCOMPARE(run.exitCode, 2);
    QCOMPARE(run.err, invalid(path, "cannot read: No such file or directory"));
}

void tst_BrokerCli::checkUnknownKey()
{
    BrokerProcess broker;
    broker.set("server.adress", quoted("0.0.0.0:1"));
    const QString path = broker.writeConfig();
    const ProcessRun run = runBroker({"--check-config", path});
    QCOMPARE(run.exitCode, 0);
    QCOMPARE(run.err, "ciphermq-broker: warning: " + path.toUtf8() +
                          ": unknown key \"server.adress\" (ignored)\n");
    QCOMPARE(run.out, path.toUtf8() + ": configuration OK\n");
}

// A normal user runs the broker directly. Root reads any file whatever its mode, so as root the
// broker runs as "nobody" (setpriv), the unprivileged kind of user a service runs as: the
// check is real either way. Everything that user needs (the binary, config, certificates) is
// copied into one directory it can enter; only the key is mode 000. A control run with a
// readable key proves that nothing else stands in the way.
void tst_BrokerCli::checkUnreadableKeyFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString base = QDir::cleanPath(dir.path());
    const auto world = QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadGroup |
                       QFile::ExeGroup | QFile::ReadOther | QFile::ExeOther;
    QVERIFY(QFile::setPermissions(base, world));
    const auto readable = QFile::ReadOwner | QFile::ReadGroup | QFile::ReadOther;
    const QString cert = base + "/server.crt";
    const QString ca = base + "/ca.crt";
    const QString openKey = base + "/open.key";
    const QString lockedKey = base + "/locked.key";
    QVERIFY(copyWithMode(certFile("server.crt"), cert, readable));
    QVERIFY(copyWithMode(certFile("ca.crt"), ca, readable));
    QVERIFY(copyWithMode(certFile("server.key"), openKey, readable));
    QVERIFY(copyWithMode(certFile("server.key"), lockedKey, {}));

    QString binary = BrokerProcess::brokerBinary();
    QStringList prefix;
    if (::geteuid() == 0) {
        const passwd *nobody = ::getpwnam("nobody");
        QVERIFY2(nobody, "no user \"nobody\" to run the broker as");
        const QString setpriv = QStandardPaths::findExecutable("setpriv");
        QVERIFY2(!setpriv.isEmpty(), "setpriv (util-linux) is needed to test as root");
        prefix =
            QStringList{setpriv, QStringLiteral("--reuid=%1").arg(nobody->pw_uid),
                        QStringLiteral("--regid=%1").arg(nobody->pw_gid), "--clear-groups", "--"};
        // The build tree may be somewhere "nobody" cannot enter (/root/...).
        const QString copy = base + "/ciphermq-broker";
        QVERIFY(copyWithMode(binary, copy, world & ~QFile::WriteOwner));
        binary = copy;
    }

    BrokerProcess broker;
    broker.set("tls.cert_path", quoted(cert));
    broker.set("tls.ca_cert_path", quoted(ca));
    const auto configWithKey = [&](const QString &key, const QString &name) {
        broker.set("tls.key_path", quoted(key));
        const QString path = base + '/' + name;
        QFile file(path);
        const bool written = file.open(QIODevice::WriteOnly) &&
                             file.write(broker.configText().toUtf8()) > 0 &&
                             file.setPermissions(readable);
        return written ? path : QString();
    };
    const QString openConfig = configWithKey(openKey, "open.toml");
    const QString lockedConfig = configWithKey(lockedKey, "locked.toml");
    QVERIFY(!openConfig.isEmpty() && !lockedConfig.isEmpty());

    const ProcessRun control = runBroker({"--check-config", openConfig}, binary, prefix);
    QVERIFY2(control.exitCode == 0, control.err.constData());

    const ProcessRun run = runBroker({"--check-config", lockedConfig}, binary, prefix);
    QCOMPARE(run.exitCode, 2);
    QCOMPARE(run.err, invalid(lockedConfig, "tls.key_path: cannot read \"" + lockedKey +
                                                "\": Permission denied"));
    QCOMPARE(run.out, QByteArray());
}

QTEST_GUILESS_MAIN(tst_BrokerCli)
#include "tst_09_broker_cli.moc"
