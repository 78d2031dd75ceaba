#include "brokerprocess.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QFile>
#include <QRegularExpression>
#include <QTest>
#include <QTextStream>

#include "testenv.h"
#include "testpostgres.h"

namespace cmq::test {

static QString quoted(const QString &text)
{
    QString escaped = text;
    escaped.replace(u'\\', QStringLiteral("\\\\")).replace(u'"', QStringLiteral("\\\""));
    return u'"' + escaped + u'"';
}

// The sanitizer options a broker gets, with log_path=P turned into
// P.<test program>.<test function> (the runtime appends the executable's name and the pid): a
// report from a broker then says which test started it (scripts/sanitize.sh).
static QString sanitizerOptionsFor(const QString &options)
{
    static const QRegularExpression logPath(QStringLiteral("(^|:)log_path=([^:]*)"));
    const QString test =
        QCoreApplication::applicationName() + u'.' +
        QString::fromLatin1(QTest::currentTestFunction() ? QTest::currentTestFunction()
                                                         : "initTestCase");
    QString result = options;
    return result.replace(logPath, QStringLiteral("\\1log_path=\\2.") + test);
}

static QProcessEnvironment brokerEnvironment(const QMap<QString, QString> &overrides)
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (auto it = overrides.cbegin(); it != overrides.cend(); ++it)
        environment.insert(it.key(), it.value());
    for (const QString &name : {QStringLiteral("ASAN_OPTIONS"), QStringLiteral("UBSAN_OPTIONS")}) {
        if (environment.contains(name))
            environment.insert(name, sanitizerOptionsFor(environment.value(name)));
    }
    return environment;
}

BrokerProcess::BrokerProcess()
{
    m_port = freePort();
    // The broker's output goes to a file, not a pipe: a test that waits on its sockets
    // (waitForReadyRead) never drains QProcess's pipe, and a broker blocked writing a log line
    // to a full pipe (64 KB, a few hundred logged requests) stops serving altogether.
    m_process.setProcessChannelMode(QProcess::MergedChannels);
    m_process.setStandardOutputFile(outputPath());
    set("server.address", quoted(QStringLiteral("127.0.0.1:%1").arg(m_port)));
    set("server.connection_type", quoted("tls"));
    set("tls.cert_path", quoted(certFile("server.crt")));
    set("tls.key_path", quoted(certFile("server.key")));
    set("tls.ca_cert_path", quoted(certFile("ca.crt")));
    set("logging.level", quoted("info"));
    set("logging.info_file_path", quoted(m_dir.filePath("logs/info.log")));
    set("logging.debug_file_path", quoted(m_dir.filePath("logs/debug.log")));
    set("logging.error_file_path", quoted(m_dir.filePath("logs/error.log")));
    set("database.driver", quoted("sqlite"));
    set("database.path", quoted(m_dir.filePath("data/ciphermq.db")));
    set("encryption.algorithm", quoted("x25519_chacha20_poly1305"));
    set("encryption.aes_key", quoted("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="));
    set("rate_limit.enabled", "false");
    set("acl.sender_cns",
        R"(["publisher-svc-1", "sender_1", "both-svc", "svc-a", "svc-b", "svc-c", "expired-client", "revoked-client"])");
    set("acl.receiver_cns",
        R"(["worker-svc-1", "receiver_1", "receiver_2", "both-svc", "svc-a", "svc-b", "svc-c"])");
    set("acl.admin_cns", R"(["ops-admin", "ops-admin-2"])");
}

BrokerProcess::~BrokerProcess()
{
    if (isRunning())
        kill();
}

void BrokerProcess::set(const QString &dottedKey, const QString &tomlValue)
{
    const qsizetype dot = dottedKey.indexOf(u'.');
    m_settings[dottedKey.left(dot)][dottedKey.mid(dot + 1)] = tomlValue;
}

void BrokerProcess::usePostgres(const QString &databaseName)
{
    const QByteArray dir = qgetenv("CMQ_TEST_POSTGRES");
    QFile file(QString::fromLocal8Bit(dir) + QStringLiteral("/connection"));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("no PostgreSQL fixture: %s", qPrintable(file.fileName()));
    // "host=127.0.0.1 port=N user=postgres dbname=postgres"
    const QList<QByteArray> parts = file.readAll().trimmed().split(' ');
    for (const QByteArray &part : parts) {
        const QList<QByteArray> kv = part.split('=');
        if (kv.size() != 2)
            continue;
        if (kv[0] == "host")
            set("database.host", quoted(QString::fromUtf8(kv[1])));
        else if (kv[0] == "port")
            set("database.port", QString::fromUtf8(kv[1]));
        else if (kv[0] == "user")
            set("database.user", quoted(QString::fromUtf8(kv[1])));
    }
    set("database.driver", quoted("postgresql"));
    set("database.dbname", quoted(databaseName));
    set("database.password", quoted(""));
}

void BrokerProcess::usePostgres(const QString &host, quint16 port, const QString &user,
                                const QString &databaseName)
{
    set("database.driver", quoted("postgresql"));
    set("database.host", quoted(host));
    set("database.port", QString::number(port));
    set("database.user", quoted(user));
    set("database.password", quoted(""));
    set("database.dbname", quoted(databaseName));
}

void BrokerProcess::usePostgres(const TestDatabase &database)
{
    usePostgres(database.server().host, database.server().port, database.server().user,
                database.name());
}

void BrokerProcess::setEnvironmentVariable(const QString &name, const QString &value)
{
    m_environment.insert(name, value);
}

QString BrokerProcess::configText() const
{
    QString text;
    QTextStream out(&text);
    for (auto section = m_settings.cbegin(); section != m_settings.cend(); ++section) {
        out << '[' << section.key() << "]\n";
        for (auto key = section->cbegin(); key != section->cend(); ++key)
            out << key.key() << " = " << key.value() << '\n';
        out << '\n';
    }
    return text;
}

QString BrokerProcess::writeConfig() const
{
    const QString path = m_dir.filePath(QStringLiteral("config.toml"));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        qFatal("cannot write %s", qPrintable(path));
    file.write(configText().toUtf8());
    return path;
}

QString BrokerProcess::brokerBinary()
{
    // CMQ_BROKER_BIN in the environment runs another build of the daemon (e.g. an installed one).
    const QString fromEnv = qEnvironmentVariable("CMQ_BROKER_BIN");
    return fromEnv.isEmpty() ? QStringLiteral(CMQ_BROKER_BIN) : fromEnv;
}

bool BrokerProcess::start(int timeoutMs)
{
    m_output.clear();
    m_process.setStandardOutputFile(outputPath()); // truncated: this run's output only
    m_process.setProcessEnvironment(brokerEnvironment(m_environment));
    const QStringList arguments{QStringLiteral("--config"), writeConfig()};
    if (m_namespace.isEmpty())
        m_process.start(brokerBinary(), arguments);
    else
        // nsenter, not `ip netns exec`: it only joins the network namespace. `ip netns exec`
        // also remounts / and /sys for it, which fails inside a chroot such as CI's fresh root
        // ("mount --make-rslave /" failed: Invalid argument).
        m_process.start(QStringLiteral("nsenter"),
                        QStringList{QStringLiteral("--net=/run/netns/") + m_namespace,
                                    brokerBinary()} +
                            arguments);
    if (!m_process.waitForStarted(timeoutMs))
        return false;
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        if (output().contains(" ready on "))
            return true;
        if (m_process.state() == QProcess::NotRunning)
            return false;
        // Returns early when the broker exits; otherwise the file is looked at again.
        m_process.waitForFinished(int(qMin<qint64>(deadline.remainingTime(), 20)));
    }
    return false;
}

bool BrokerProcess::terminate(int timeoutMs)
{
    m_process.terminate();
    const bool exited = m_process.waitForFinished(timeoutMs);
    output();
    return exited;
}

void BrokerProcess::kill()
{
    m_process.kill();
    m_process.waitForFinished(30000);
    output();
}

bool BrokerProcess::isRunning() const
{
    return m_process.state() != QProcess::NotRunning;
}

QString BrokerProcess::outputPath() const
{
    return m_dir.filePath(QStringLiteral("broker.out"));
}

QByteArray BrokerProcess::output()
{
    QFile file(outputPath());
    if (file.open(QIODevice::ReadOnly))
        m_output = file.readAll(); // the file holds everything since start(); it only grows
    return m_output;
}

} // namespace cmq::test
