// Config loading: every key read, the defaults, the seed's validation rules and ours, and the
// exact messages a user sees for each mistake.

#include <QDir>
#include <QFile>
#include <QMap>
#include <QTemporaryDir>
#include <QTest>

#include "config/config.h"

using cmq::Config;

namespace {

QString str(const QString &s)
{
    return u'"' + s + u'"';
}

QByteArray keyBytes(char fill)
{
    return QByteArray(32, fill);
}

// A config document built from the minimal valid one, edited key by key. Section "" holds
// root-level keys, which TOML requires before the first [section].
class Doc
{
public:
    Doc()
    {
        m_sections["server"];
        m_sections["tls"] = {{"cert_path", str("certs/server.crt")},
                             {"key_path", str("certs/server.key")},
                             {"ca_cert_path", str("certs/ca.crt")}};
        m_sections["encryption"] = {{"aes_key", str(keyBytes('a').toBase64())}};
    }
    Doc &set(const QString &section, const QString &key, const QString &value)
    {
        m_sections[section][key] = value;
        return *this;
    }
    Doc &remove(const QString &section, const QString &key = {})
    {
        if (key.isEmpty())
            m_sections.remove(section);
        else
            m_sections[section].remove(key);
        return *this;
    }
    QString text() const
    {
        QString out;
        for (auto s = m_sections.cbegin(); s != m_sections.cend(); ++s) {
            if (!s.key().isEmpty())
                out += QStringLiteral("[%1]\n").arg(s.key());
            for (auto k = s->cbegin(); k != s->cend(); ++k)
                out += QStringLiteral("%1 = %2\n").arg(k.key(), k.value());
        }
        return out;
    }

private:
    QMap<QString, QMap<QString, QString>> m_sections;
};

QString portList(const QList<quint16> &ports)
{
    QStringList text;
    for (quint16 port : ports)
        text.append(QString::number(port));
    return text.join(u',');
}

// Every key of a loaded config as text, so that table rows can name the key they check.
QString valueOf(const Config &c, const QString &key)
{
    const auto addr = [](const cmq::HostPort &a) {
        return QStringLiteral("%1 %2").arg(a.host.toString()).arg(a.port);
    };
    const auto n = [](auto v) { return QString::number(v); };
    const auto b = [](bool v) { return QString::fromLatin1(v ? "true" : "false"); };
    const QMap<QString, QString> values = {
        {"server.address", addr(c.server.address)},
        {"server.connection_type", c.server.connectionType},
        {"server.max_line_bytes", n(c.server.maxLineBytes)},
        {"server.handshake_timeout_ms", n(c.server.handshakeTimeoutMs)},
        {"server.max_connections", n(c.server.maxConnections)},
        {"server.max_handshakes", n(c.server.maxHandshakes)},
        {"server.max_handshakes_per_ip", n(c.server.maxHandshakesPerIp)},
        {"server.output_buffer_bytes", n(c.server.outputBufferBytes)},
        {"tls.cert_path", c.tls.certPath},
        {"tls.key_path", c.tls.keyPath},
        {"tls.ca_cert_path", c.tls.caCertPath},
        {"tls.crl_path", c.tls.crlPath},
        {"logging.level", c.logging.level},
        {"logging.rotation", c.logging.rotation},
        {"logging.info_file_path", c.logging.infoFilePath},
        {"logging.debug_file_path", c.logging.debugFilePath},
        {"logging.error_file_path", c.logging.errorFilePath},
        {"logging.max_size_mb", n(c.logging.maxSizeMb)},
        {"logging.max_files", n(c.logging.maxFiles)},
        {"database.driver", c.database.driver},
        {"database.path", c.database.path},
        {"database.host", c.database.hosts.join(u',')},
        {"database.port", portList(c.database.ports)},
        {"database.user", c.database.user},
        {"database.password", c.database.password},
        {"database.dbname", c.database.dbname},
        {"database.connect_attempts", n(c.database.connectAttempts)},
        {"database.connect_retry_delay_ms", n(c.database.connectRetryDelayMs)},
        {"encryption.algorithm", c.encryption.algorithm},
        {"encryption.aes_key", QString::fromLatin1(c.encryption.aesKey.toBase64())},
        {"performance.max_queue_size", n(c.performance.maxQueueSize)},
        {"performance.max_queue_bytes", n(c.performance.maxQueueBytes)},
        {"performance.memory_budget_mb", n(c.performance.memoryBudgetMb)},
        {"performance.overflow_policy", c.performance.overflowPolicy},
        {"performance.heartbeat_timeout", n(c.performance.heartbeatTimeout)},
        {"performance.cleanup_interval", n(c.performance.cleanupInterval)},
        {"performance.consumer_cleanup_interval", n(c.performance.consumerCleanupInterval)},
        {"performance.idle_timeout_sec", n(c.performance.idleTimeoutSec)},
        {"performance.default_prefetch", n(c.performance.defaultPrefetch)},
        {"performance.ack_timeout_sec", n(c.performance.ackTimeoutSec)},
        {"performance.max_queues_per_cn", n(c.performance.maxQueuesPerCn)},
        {"performance.max_exchanges_per_cn", n(c.performance.maxExchangesPerCn)},
        {"performance.max_bindings_per_cn", n(c.performance.maxBindingsPerCn)},
        {"admin.enabled", b(c.admin.enabled)},
        {"admin.address", addr(c.admin.address)},
        {"admin.allowed_cns", c.admin.allowedCns.join(u',')},
        {"admin.metrics_http_address", addr(c.admin.metricsHttpAddress)},
        {"admin.metrics_http_tls", b(c.admin.metricsHttpTls)},
        {"rate_limit.enabled", b(c.rateLimit.enabled)},
        {"rate_limit.global_rps", n(c.rateLimit.globalRps)},
        {"rate_limit.global_burst", n(c.rateLimit.globalBurst)},
        {"rate_limit.publish_rps", n(c.rateLimit.publishRps)},
        {"rate_limit.publish_burst", n(c.rateLimit.publishBurst)},
        {"rate_limit.ip_global_rps", n(c.rateLimit.ipGlobalRps)},
        {"rate_limit.ip_global_burst", n(c.rateLimit.ipGlobalBurst)},
        {"rate_limit.ip_publish_rps", n(c.rateLimit.ipPublishRps)},
        {"rate_limit.ip_publish_burst", n(c.rateLimit.ipPublishBurst)},
        {"rate_limit.max_connections_per_ip", n(c.rateLimit.maxConnectionsPerIp)},
        {"rate_limit.max_connections_per_cn", n(c.rateLimit.maxConnectionsPerCn)},
        {"acl.sender_cns", c.acl.senderCns.join(u',')},
        {"acl.receiver_cns", c.acl.receiverCns.join(u',')},
        {"acl.admin_cns", c.acl.adminCns.join(u',')},
    };
    return values.value(key, QStringLiteral("<no such key %1>").arg(key));
}

// A config setting every key to something other than its default. $DIR is the test directory.
const char *const kFullToml = R"([server]
address = "[::1]:6000"
connection_type = "tls"
max_line_bytes = 2048
handshake_timeout_ms = 1500
max_connections = 300
max_handshakes = 40
max_handshakes_per_ip = 4
output_buffer_bytes = 131072

[tls]
cert_path = "$DIR/certs/server.crt"
key_path = "$DIR/certs/server.key"
ca_cert_path = "$DIR/certs/ca.crt"
crl_path = "$DIR/certs/crl.pem"

[logging]
level = "debug"
rotation = "hourly"
info_file_path = "/var/log/cmq/i.log"
debug_file_path = "/var/log/cmq/d.log"
error_file_path = "/var/log/cmq/e.log"
max_size_mb = 7
max_files = 3

[database]
driver = "postgresql"
path = "/srv/cmq.db"
host = "db.internal"
port = 6543
user = "svc"
password = "s3cret"
dbname = "queue"
connect_attempts = 9
connect_retry_delay_ms = 250

[encryption]
algorithm = "x25519_chacha20_poly1305"
aes_key = "a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s="

[performance]
max_queue_size = 42
max_queue_bytes = 4242
memory_budget_mb = 424
overflow_policy = "reject-publish"
heartbeat_timeout = 11
cleanup_interval = 12
consumer_cleanup_interval = 13
idle_timeout_sec = 14
default_prefetch = 15
ack_timeout_sec = 16
max_queues_per_cn = 17
max_exchanges_per_cn = 18
max_bindings_per_cn = 19

[admin]
enabled = true
address = "localhost:9999"
allowed_cns = ["ops-1", "ops-2"]
metrics_http_address = "10.0.0.5:9464"
metrics_http_tls = true

[rate_limit]
enabled = false
global_rps = 1.5
global_burst = 2.5
publish_rps = 3.5
publish_burst = 4.5
ip_global_rps = 11.5
ip_global_burst = 12.5
ip_publish_rps = 13.5
ip_publish_burst = 14.5
max_connections_per_ip = 5
max_connections_per_cn = 6

[acl]
sender_cns = ["pub-1"]
receiver_cns = ["worker-1", "worker-2"]
admin_cns = ["ops-admin"]
)";

struct Expected
{
    const char *key;
    const char *value;
};

const Expected kFullExpected[] = {
    {"server.address", "::1 6000"},
    {"server.connection_type", "tls"},
    {"server.max_line_bytes", "2048"},
    {"server.handshake_timeout_ms", "1500"},
    {"server.max_connections", "300"},
    {"server.max_handshakes", "40"},
    {"server.max_handshakes_per_ip", "4"},
    {"server.output_buffer_bytes", "131072"},
    {"tls.cert_path", "$DIR/certs/server.crt"},
    {"tls.key_path", "$DIR/certs/server.key"},
    {"tls.ca_cert_path", "$DIR/certs/ca.crt"},
    {"tls.crl_path", "$DIR/certs/crl.pem"},
    {"logging.level", "debug"},
    {"logging.rotation", "hourly"},
    {"logging.info_file_path", "/var/log/cmq/i.log"},
    {"logging.debug_file_path", "/var/log/cmq/d.log"},
    {"logging.error_file_path", "/var/log/cmq/e.log"},
    {"logging.max_size_mb", "7"},
    {"logging.max_files", "3"},
    {"database.driver", "postgresql"},
    {"database.path", "/srv/cmq.db"},
    {"database.host", "db.internal"},
    {"database.port", "6543"},
    {"database.user", "svc"},
    {"database.password", "s3cret"},
    {"database.dbname", "queue"},
    {"database.connect_attempts", "9"},
    {"database.connect_retry_delay_ms", "250"},
    {"encryption.algorithm", "x25519_chacha20_poly1305"},
    {"encryption.aes_key", "a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s="},
    {"performance.max_queue_size", "42"},
    {"performance.max_queue_bytes", "4242"},
    {"performance.memory_budget_mb", "424"},
    {"performance.overflow_policy", "reject-publish"},
    {"performance.heartbeat_timeout", "11"},
    {"performance.cleanup_interval", "12"},
    {"performance.consumer_cleanup_interval", "13"},
    {"performance.idle_timeout_sec", "14"},
    {"performance.default_prefetch", "15"},
    {"performance.ack_timeout_sec", "16"},
    {"performance.max_queues_per_cn", "17"},
    {"performance.max_exchanges_per_cn", "18"},
    {"performance.max_bindings_per_cn", "19"},
    {"admin.enabled", "true"},
    {"admin.address", "127.0.0.1 9999"},
    {"admin.allowed_cns", "ops-1,ops-2"},
    {"admin.metrics_http_address", "10.0.0.5 9464"},
    {"admin.metrics_http_tls", "true"},
    {"rate_limit.enabled", "false"},
    {"rate_limit.global_rps", "1.5"},
    {"rate_limit.global_burst", "2.5"},
    {"rate_limit.publish_rps", "3.5"},
    {"rate_limit.publish_burst", "4.5"},
    {"rate_limit.ip_global_rps", "11.5"},
    {"rate_limit.ip_global_burst", "12.5"},
    {"rate_limit.ip_publish_rps", "13.5"},
    {"rate_limit.ip_publish_burst", "14.5"},
    {"rate_limit.max_connections_per_ip", "5"},
    {"rate_limit.max_connections_per_cn", "6"},
    {"acl.sender_cns", "pub-1"},
    {"acl.receiver_cns", "worker-1,worker-2"},
    {"acl.admin_cns", "ops-admin"},
};

} // namespace

class tst_Config : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void fullConfig_data();
    void fullConfig();
    void defaults();
    void exampleConfig();
    void valid_data();
    void valid();
    void invalid_data();
    void invalid();
    void syntaxError_data();
    void syntaxError();
    void missingFile();
    void unknownKeys();
    void unknownRotation();
    void relativePaths();

private:
    // Writes `text` ($DIR replaced) to `name` in the test directory and returns its path.
    QString write(const QString &text, const QString &name = QStringLiteral("config.toml"));
    QString dir() const { return m_dir.path(); }

    QTemporaryDir m_dir;
};

void tst_Config::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY(QDir(dir()).mkpath(QStringLiteral("certs")));
    // loadConfig only checks that the files can be read; their content is the TLS code's job.
    for (const char *name : {"server.crt", "server.key", "ca.crt", "crl.pem"}) {
        QFile pem(dir() + QStringLiteral("/certs/") + QLatin1String(name));
        QVERIFY(pem.open(QIODevice::WriteOnly));
        pem.write("-----BEGIN PLACEHOLDER-----\nAAAA\n-----END PLACEHOLDER-----\n");
    }
}

QString tst_Config::write(const QString &text, const QString &name)
{
    const QString path = QDir(dir()).filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        qFatal("cannot write %s", qPrintable(path));
    file.write(QString(text).replace(QLatin1String("$DIR"), dir()).toUtf8());
    return path;
}

void tst_Config::fullConfig_data()
{
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("expected");
    for (const Expected &e : kFullExpected)
        QTest::newRow(e.key) << QString::fromLatin1(e.key) << QString::fromLatin1(e.value);
}

void tst_Config::fullConfig()
{
    QFETCH(QString, key);
    QFETCH(QString, expected);
    // Every "key = value" line of the file has a row, so no key goes unchecked.
    QCOMPARE(QString::fromLatin1(kFullToml).count(QLatin1String(" = ")),
             qsizetype(std::size(kFullExpected)));

    const QString path = write(QString::fromLatin1(kFullToml));
    const auto loaded = cmq::loadConfig(path);
    QVERIFY2(loaded.ok(), qPrintable(loaded.error()));
    QCOMPARE(loaded->warnings, QStringList());
    QCOMPARE(loaded->config.sourcePath, path);
    QCOMPARE(valueOf(loaded->config, key), expected.replace(QLatin1String("$DIR"), dir()));
}

void tst_Config::defaults()
{
    const auto loaded = cmq::loadConfig(write(Doc().text()));
    QVERIFY2(loaded.ok(), qPrintable(loaded.error()));
    QCOMPARE(loaded->warnings, QStringList());
    const Config &c = loaded->config;
    const Config d;

    QCOMPARE(valueOf(c, "server.address"), QStringLiteral("0.0.0.0 5671"));
    QCOMPARE(c.server.address.text, QStringLiteral("0.0.0.0:5671"));
    QCOMPARE(valueOf(c, "admin.address"), QStringLiteral("127.0.0.1 9091"));
    QCOMPARE(c.admin.address.text, QStringLiteral("127.0.0.1:9091"));
    QCOMPARE(c.tls.crlPath, QString());
    // Relative defaults are anchored at the config file too, not at whatever the cwd is.
    QCOMPARE(c.logging.infoFilePath, dir() + QStringLiteral("/logs/info.log"));
    QCOMPARE(c.logging.debugFilePath, dir() + QStringLiteral("/logs/debug.log"));
    QCOMPARE(c.logging.errorFilePath, dir() + QStringLiteral("/logs/error.log"));
    QCOMPARE(c.database.path, dir() + QStringLiteral("/data/ciphermq.db"));
    QCOMPARE(c.encryption.aesKey, keyBytes('a'));

    // Everything else is exactly the default declared in config.h.
    for (const Expected &e : kFullExpected) {
        const QString key = QString::fromLatin1(e.key);
        if (key.startsWith(u"tls.") || key.endsWith(u"_file_path") || key.endsWith(u"address") ||
            key == u"database.path" || key == u"encryption.aes_key")
            continue;
        QCOMPARE(valueOf(c, key), valueOf(d, key));
    }
}

// The shipped example must load once the installer has filled it in, and document the defaults.
void tst_Config::exampleConfig()
{
    const QString example = QFINDTESTDATA("../../../resources/config.toml");
    QVERIFY(!example.isEmpty());
    QFile file(example);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QString text = QString::fromUtf8(file.readAll());
    text.replace(QLatin1String("/etc/ciphermq/certs"), dir() + QStringLiteral("/certs"));

    // As shipped: refused, with a message that says what to do.
    const auto shipped = cmq::loadConfig(write(text, QStringLiteral("example.toml")));
    QVERIFY(!shipped.ok());
    QVERIFY2(shipped.error().endsWith(QLatin1String(
                 ": encryption.aes_key: is still the placeholder \"@CIPHERMQ_AES_KEY@\"; "
                 "generate one with \"openssl rand -base64 32\"")),
             qPrintable(shipped.error()));

    // What the installer does (see the comment at the top of the file).
    QVERIFY(text.contains(QLatin1String("\naes_key = \"@CIPHERMQ_AES_KEY@\"\n")));
    text.replace(QLatin1String("\naes_key = \"@CIPHERMQ_AES_KEY@\""),
                 QStringLiteral("\naes_key = \"%1\"").arg(keyBytes('e').toBase64()));
    const auto loaded = cmq::loadConfig(write(text, QStringLiteral("example.toml")));
    QVERIFY2(loaded.ok(), qPrintable(loaded.error()));
    QCOMPARE(loaded->warnings, QStringList());

    const auto minimal = cmq::loadConfig(write(Doc().text()));
    QVERIFY2(minimal.ok(), qPrintable(minimal.error()));
    for (const Expected &e : kFullExpected) {
        const QString key = QString::fromLatin1(e.key);
        if (key.startsWith(u"tls.") || key.endsWith(u"_file_path") || key == u"database.path" ||
            key == u"encryption.aes_key")
            continue;
        QCOMPARE(valueOf(loaded->config, key), valueOf(minimal->config, key));
    }
    QCOMPARE(loaded->config.database.path, QStringLiteral("/var/lib/ciphermq/ciphermq.db"));
    QCOMPARE(loaded->config.tls.certPath, dir() + QStringLiteral("/certs/server.crt"));
}

void tst_Config::valid_data()
{
    QTest::addColumn<QString>("toml");
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("expected");

    const auto row = [](const char *name, const char *section, const char *key,
                        const QString &value, const char *expected) {
        QTest::newRow(name) << Doc().set(section, key, value).text()
                            << QStringLiteral("%1.%2").arg(section, key) << expected;
    };
    row("address ipv4", "server", "address", str("10.1.2.3:65535"), "10.1.2.3 65535");
    row("address ipv6", "server", "address", str("[::1]:5671"), "::1 5671");
    row("address ipv6 any", "server", "address", str("[::]:1"), ":: 1");
    row("address localhost", "admin", "address", str("localhost:9091"), "127.0.0.1 9091");
    row("address zero octet", "admin", "address", str("0.0.0.0:80"), "0.0.0.0 80");
    row("max_line_bytes min", "server", "max_line_bytes", "1024", "1024");
    row("max_line_bytes max", "server", "max_line_bytes", "67108864", "67108864");
    row("prefetch unlimited", "performance", "default_prefetch", "0", "0");
    row("prefetch max", "performance", "default_prefetch", "65535", "65535");
    row("longest timeout", "performance", "ack_timeout_sec", "2147483", "2147483");
    row("retry at once", "database", "connect_retry_delay_ms", "0", "0");
    row("port max", "database", "port", "65535", "65535");
    row("one host in a list", "database", "host", "[\"db1\"]", "db1");
    row("host list", "database", "host", "[\"db1\", \"10.0.0.2\"]", "db1,10.0.0.2");
    row("port list", "database", "port", "[5432, 5433]", "5432,5433");
    QTest::newRow("one port for two hosts") << Doc()
                                                   .set("database", "driver", str("postgresql"))
                                                   .set("database", "host", "[\"a\", \"b\"]")
                                                   .set("database", "port", "6000")
                                                   .text()
                                            << "database.port"
                                            << "6000";
    row("integer rps", "rate_limit", "global_rps", "100", "100");
    QTest::newRow("ip rates follow the cn ones")
        << Doc().set("rate_limit", "publish_rps", "7").set("rate_limit", "global_burst", "9").text()
        << "rate_limit.ip_publish_rps"
        << "7";
    QTest::newRow("ip burst follows the cn one")
        << Doc().set("rate_limit", "global_burst", "9").text() << "rate_limit.ip_global_burst"
        << "9";
    QTest::newRow("ip rate of its own")
        << Doc().set("rate_limit", "publish_rps", "7").set("rate_limit", "ip_publish_rps", "70").text()
        << "rate_limit.ip_publish_rps"
        << "70";
    row("tiny burst", "rate_limit", "publish_burst", "0.001", "0.001");
    row("rotation never", "logging", "rotation", str("never"), "never");
    row("keep every log", "logging", "max_files", "0", "0");
    row("one connection", "server", "max_connections", "1", "1");
    row("smallest output buffer", "server", "output_buffer_bytes", "65536", "65536");
    row("metrics on loopback", "admin", "metrics_http_address", str("127.0.0.1:9464"),
        "127.0.0.1 9464");
    row("metrics on ipv6 loopback", "admin", "metrics_http_address", str("[::1]:9464"),
        "::1 9464");
    row("metrics off", "admin", "metrics_http_address", str(""), " 0");
    QTest::newRow("metrics anywhere with tls")
        << Doc()
               .set("admin", "metrics_http_address", str("0.0.0.0:9464"))
               .set("admin", "metrics_http_tls", "true")
               .text()
        << "admin.metrics_http_address"
        << "0.0.0.0 9464";
    row("level trace", "logging", "level", str("trace"), "trace");
    row("empty acl", "acl", "sender_cns", "[]", "");
    // Only "<cn>_" starting another CN overlaps: receiver_1 and receiver_10 are apart.
    row("acl receivers with shared stems", "acl", "receiver_cns",
        R"(["receiver_1", "receiver_10", "receiverx", "receiver-1"])",
        "receiver_1,receiver_10,receiverx,receiver-1");
    row("aes_key unpadded", "encryption", "aes_key", str(keyBytes('b').toBase64().chopped(1)),
        keyBytes('b').toBase64().constData());
    QTest::newRow("postgresql needs no path") << Doc()
                                                     .set("database", "driver", str("postgresql"))
                                                     .set("database", "path", str(""))
                                                     .text()
                                              << "database.path"
                                              << "";
    QTest::newRow("sqlite needs no host")
        << Doc().set("database", "driver", str("sqlite")).set("database", "host", str("")).text()
        << "database.host"
        << "";
}

void tst_Config::valid()
{
    QFETCH(QString, toml);
    QFETCH(QString, key);
    QFETCH(QString, expected);
    const auto loaded = cmq::loadConfig(write(toml));
    QVERIFY2(loaded.ok(), qPrintable(loaded.error()));
    QCOMPARE(loaded->warnings, QStringList());
    QCOMPARE(valueOf(loaded->config, key), expected);
}

void tst_Config::invalid_data()
{
    QTest::addColumn<QString>("toml");
    QTest::addColumn<QString>("error"); // after "<file>: "; $DIR is the test directory

    const auto set = [](const char *name, const char *section, const char *key,
                        const QString &value, const QString &error) {
        QTest::newRow(name) << Doc().set(section, key, value).text() << error;
    };
    const auto drop = [](const char *name, const char *section, const char *key,
                         const QString &error) {
        QTest::newRow(name) << Doc().remove(section, key).text() << error;
    };
    const QString tlsRequired =
        QStringLiteral("is required when server.connection_type is \"tls\"");
    const QString howTo = QStringLiteral("generate one with \"openssl rand -base64 32\"");

    // The seed's four rules.
    drop("no cert_path", "tls", "cert_path", "tls.cert_path: " + tlsRequired);
    drop("no key_path", "tls", "key_path", "tls.key_path: " + tlsRequired);
    drop("no ca_cert_path", "tls", "ca_cert_path", "tls.ca_cert_path: " + tlsRequired);
    set("empty cert_path", "tls", "cert_path", str(""), "tls.cert_path: " + tlsRequired);
    drop("no tls section", "tls", "",
         "tls: section is required when server.connection_type is \"tls\"");
    const auto pg = [](const char *key) {
        return Doc()
            .set("database", "driver", str("postgresql"))
            .set("database", key, str(""))
            .text();
    };
    const QString pgRule = QStringLiteral(": must not be empty when driver is \"postgresql\"");
    QTest::newRow("postgresql empty host") << pg("host") << "database.host" + pgRule;
    const auto hosts = [](const char *hostValue, const char *portValue) {
        return Doc()
            .set("database", "driver", str("postgresql"))
            .set("database", "host", hostValue)
            .set("database", "port", portValue)
            .text();
    };
    QTest::newRow("postgresql empty host in a list")
        << hosts(R"(["a", ""])", "5432") << "database.host[1]: must be a non-empty string";
    QTest::newRow("postgresql empty host list")
        << hosts("[]", "5432") << "database.host: must not be an empty array";
    QTest::newRow("postgresql host with a comma")
        << hosts(R"("a,b")", "5432")
        << R"(database.host: "a,b" is not one host name or address (list several as an array))";
    QTest::newRow("postgresql ports do not match hosts")
        << hosts(R"(["a", "b", "c"])", "[1, 2]")
        << "database.port: must be one port or one per host (3 hosts, 2 ports)";
    QTest::newRow("postgresql port out of range in a list")
        << hosts(R"(["a", "b"])", "[5432, 0]")
        << "database.port[1]: must be an integer between 1 and 65535";
    QTest::newRow("postgresql host of the wrong type")
        << hosts("5", "5432")
        << "database.host: must be a string or an array of strings (got integer)";
    QTest::newRow("postgresql empty user") << pg("user") << "database.user" + pgRule;
    QTest::newRow("postgresql empty dbname") << pg("dbname") << "database.dbname" + pgRule;
    set("sqlite empty path", "database", "path", str(""),
        "database.path: must not be empty when driver is \"sqlite\"");
    set("wrong algorithm", "encryption", "algorithm", str("aes-256-gcm"),
        "encryption.algorithm: must be \"x25519_chacha20_poly1305\" (got \"aes-256-gcm\")");
    set("aes_key not base64", "encryption", "aes_key", str("not base64!"),
        "encryption.aes_key: is not valid base64; " + howTo);
    set("aes_key 16 bytes", "encryption", "aes_key", str(QByteArray(16, 'x').toBase64()),
        "encryption.aes_key: must be base64 of exactly 32 bytes (got 16)");
    set("aes_key 33 bytes", "encryption", "aes_key", str(QByteArray(33, 'x').toBase64()),
        "encryption.aes_key: must be base64 of exactly 32 bytes (got 33)");
    drop("no aes_key", "encryption", "aes_key", "encryption.aes_key: is required; " + howTo);
    set("aes_key placeholder", "encryption", "aes_key", str("@CIPHERMQ_AES_KEY@"),
        "encryption.aes_key: is still the placeholder \"@CIPHERMQ_AES_KEY@\"; " + howTo);

    // Required sections.
    drop("no server section", "server", "", "server: section is required");
    drop("no encryption section", "encryption", "", "encryption: section is required");
    QTest::newRow("server not a table") << Doc().remove("server").set("", "server", "5").text()
                                        << "server: must be a table (got integer)";

    // Ranges.
    set("max_line_bytes low", "server", "max_line_bytes", "1023",
        "server.max_line_bytes: must be between 1024 and 67108864 (got 1023)");
    set("max_line_bytes high", "server", "max_line_bytes", "67108865",
        "server.max_line_bytes: must be between 1024 and 67108864 (got 67108865)");
    set("handshake timeout 0", "server", "handshake_timeout_ms", "0",
        "server.handshake_timeout_ms: must be at least 1 (got 0)");
    set("handshake timeout over int", "server", "handshake_timeout_ms", "3000000000",
        "server.handshake_timeout_ms: must be between 1 and 2147483647 (got 3000000000)");
    set("max_size_mb 0", "logging", "max_size_mb", "0",
        "logging.max_size_mb: must be at least 1 (got 0)");
    set("db port 0", "database", "port", "0", "database.port: must be between 1 and 65535 (got 0)");
    set("db port 65536", "database", "port", "65536",
        "database.port: must be between 1 and 65535 (got 65536)");
    set("connect_attempts 0", "database", "connect_attempts", "0",
        "database.connect_attempts: must be at least 1 (got 0)");
    set("retry delay negative", "database", "connect_retry_delay_ms", "-1",
        "database.connect_retry_delay_ms: must be at least 0 (got -1)");
    set("max_queue_size 0", "performance", "max_queue_size", "0",
        "performance.max_queue_size: must be at least 1 (got 0)");
    set("max_queue_bytes negative", "performance", "max_queue_bytes", "-1",
        "performance.max_queue_bytes: must be at least 0 (got -1)");
    set("memory_budget_mb negative", "performance", "memory_budget_mb", "-1",
        "performance.memory_budget_mb: must be at least 0 (got -1)");
    for (const char *key : {"heartbeat_timeout", "cleanup_interval", "consumer_cleanup_interval",
                            "idle_timeout_sec", "ack_timeout_sec"}) {
        const QString name = QLatin1String(key);
        set(qPrintable(name + " 0"), "performance", key, "0",
            "performance." + name + ": must be between 1 and 2147483 (got 0)");
        set(qPrintable(name + " overflows ms"), "performance", key, "2147484",
            "performance." + name + ": must be between 1 and 2147483 (got 2147484)");
    }
    set("queue quota 0", "performance", "max_queues_per_cn", "0",
        "performance.max_queues_per_cn: must be at least 1 (got 0)");
    set("exchange quota 0", "performance", "max_exchanges_per_cn", "0",
        "performance.max_exchanges_per_cn: must be at least 1 (got 0)");
    set("binding quota negative", "performance", "max_bindings_per_cn", "-5",
        "performance.max_bindings_per_cn: must be at least 1 (got -5)");
    set("prefetch negative", "performance", "default_prefetch", "-1",
        "performance.default_prefetch: must be between 0 and 65535 (got -1)");
    set("prefetch 65536", "performance", "default_prefetch", "65536",
        "performance.default_prefetch: must be between 0 and 65535 (got 65536)");
    for (const char *key : {"global_rps", "global_burst", "publish_rps", "publish_burst",
                            "ip_global_rps", "ip_global_burst", "ip_publish_rps",
                            "ip_publish_burst"}) {
        const QString name = QLatin1String(key);
        set(qPrintable(name + " 0"), "rate_limit", key, "0.0",
            "rate_limit." + name + ": must be greater than 0 (got 0)");
        set(qPrintable(name + " negative"), "rate_limit", key, "-5",
            "rate_limit." + name + ": must be greater than 0 (got -5)");
    }
    set("rps nan", "rate_limit", "global_rps", "nan",
        "rate_limit.global_rps: must be greater than 0 (got nan)");
    set("rps inf", "rate_limit", "publish_rps", "inf",
        "rate_limit.publish_rps: must be greater than 0 (got inf)");
    set("per ip 0", "rate_limit", "max_connections_per_ip", "0",
        "rate_limit.max_connections_per_ip: must be at least 1 (got 0)");
    set("per cn 0", "rate_limit", "max_connections_per_cn", "0",
        "rate_limit.max_connections_per_cn: must be at least 1 (got 0)");
    set("max_connections 0", "server", "max_connections", "0",
        "server.max_connections: must be at least 1 (got 0)");
    set("max_handshakes 0", "server", "max_handshakes", "0",
        "server.max_handshakes: must be at least 1 (got 0)");
    set("max_handshakes_per_ip 0", "server", "max_handshakes_per_ip", "0",
        "server.max_handshakes_per_ip: must be at least 1 (got 0)");
    set("output buffer small", "server", "output_buffer_bytes", "65535",
        "server.output_buffer_bytes: must be between 65536 and 1073741824 (got 65535)");
    set("max_files negative", "logging", "max_files", "-1",
        "logging.max_files: must be at least 0 (got -1)");
    set("metrics address bad", "admin", "metrics_http_address", str("metrics:9464"),
        "admin.metrics_http_address: \"metrics\" is not an IPv4 address, [IPv6] address or "
        "localhost (got \"metrics:9464\")");
    set("metrics plain off loopback", "admin", "metrics_http_address", str("0.0.0.0:9464"),
        "admin.metrics_http_address: must be a loopback address unless admin.metrics_http_tls "
        "is true (got \"0.0.0.0:9464\")");
    set("metrics tls not bool", "admin", "metrics_http_tls", str("yes"),
        "admin.metrics_http_tls: must be true or false (got string)");

    // Enumerations.
    set("connection_type tcp", "server", "connection_type", str("tcp"),
        "server.connection_type: must be \"tls\" (got \"tcp\")");
    set("level verbose", "logging", "level", str("verbose"),
        "logging.level: must be one of \"trace\", \"debug\", \"info\", \"warn\", \"error\" "
        "(got \"verbose\")");
    set("level upper case", "logging", "level", str("INFO"),
        "logging.level: must be one of \"trace\", \"debug\", \"info\", \"warn\", \"error\" "
        "(got \"INFO\")");
    set("overflow drop-tail", "performance", "overflow_policy", str("drop-tail"),
        "performance.overflow_policy: must be one of \"drop-head\", \"reject-publish\" "
        "(got \"drop-tail\")");
    set("driver mysql", "database", "driver", str("mysql"),
        "database.driver: must be one of \"postgresql\", \"sqlite\" (got \"mysql\")");

    // Addresses.
    const auto addr = [&set](const char *name, const char *text, const QString &why) {
        set(name, "server", "address", str(QLatin1String(text)),
            QStringLiteral("server.address: %1 (got \"%2\")").arg(why, QLatin1String(text)));
    };
    addr("no port", "0.0.0.0", "expected \"host:port\"");
    addr("port 0", "0.0.0.0:0", "port \"0\" is not a number between 1 and 65535");
    addr("port 65536", "0.0.0.0:65536", "port \"65536\" is not a number between 1 and 65535");
    addr("port name", "0.0.0.0:amqps", "port \"amqps\" is not a number between 1 and 65535");
    addr("port empty", "0.0.0.0:", "port \"\" is not a number between 1 and 65535");
    addr("port signed", "0.0.0.0:+80", "port \"+80\" is not a number between 1 and 65535");
    addr("bare ipv6", "::1:5671", "an IPv6 address must be written in brackets, \"[::1]:port\"");
    addr("bracket no colon", "[::1]5671", "expected \"[IPv6]:port\"");
    addr("ipv4 in brackets", "[1.2.3.4]:80", "\"1.2.3.4\" is not an IPv6 address");
    addr("hostname", "broker.example.com:5671",
         "\"broker.example.com\" is not an IPv4 address, [IPv6] address or localhost");
    addr("short ipv4", "127.1:5671",
         "\"127.1\" is not an IPv4 address, [IPv6] address or localhost");
    addr("octet 256", "256.0.0.1:5671",
         "\"256.0.0.1\" is not an IPv4 address, [IPv6] address or localhost");
    addr("leading zero", "010.0.0.1:5671",
         "\"010.0.0.1\" is not an IPv4 address, [IPv6] address or localhost");
    addr("leading space", " 1.2.3.4:5671",
         "\" 1.2.3.4\" is not an IPv4 address, [IPv6] address or localhost");
    addr("empty host", ":5671", "\"\" is not an IPv4 address, [IPv6] address or localhost");
    set("admin address bad", "admin", "address", str("localhost"),
        "admin.address: expected \"host:port\" (got \"localhost\")");

    // TLS files. A file that exists but cannot be read ("Permission denied") is not a row here:
    // root reads it anyway, so tests/integration/tst_09_broker_cli.cpp checks it against the
    // broker binary, run as an unprivileged user when the tests run as root.
    set("missing cert file", "tls", "cert_path", str("certs/nope.crt"),
        "tls.cert_path: cannot read \"$DIR/certs/nope.crt\": No such file or directory");
    set("missing ca file", "tls", "ca_cert_path", str("/nonexistent/ca.crt"),
        "tls.ca_cert_path: cannot read \"/nonexistent/ca.crt\": No such file or directory");
    set("key is a directory", "tls", "key_path", str("certs"),
        "tls.key_path: cannot read \"$DIR/certs\": file to open is a directory");
    set("missing crl file", "tls", "crl_path", str("certs/nope.crl"),
        "tls.crl_path: cannot read \"$DIR/certs/nope.crl\": No such file or directory");

    // Wrong types.
    set("int as string", "server", "max_line_bytes", str("1MiB"),
        "server.max_line_bytes: must be an integer (got string)");
    set("int as float", "performance", "max_queue_size", "1.5",
        "performance.max_queue_size: must be an integer (got float)");
    set("port as string", "database", "port", str("5432"),
        "database.port: must be an integer or an array of integers (got string)");
    set("string as int", "logging", "level", "3", "logging.level: must be a string (got integer)");
    set("path as int", "tls", "cert_path", "1", "tls.cert_path: must be a string (got integer)");
    set("address as int", "server", "address", "5671",
        "server.address: must be a string (got integer)");
    set("bool as string", "admin", "enabled", str("yes"),
        "admin.enabled: must be true or false (got string)");
    set("double as string", "rate_limit", "global_rps", str("fast"),
        "rate_limit.global_rps: must be a number (got string)");
    set("double as bool", "rate_limit", "publish_burst", "true",
        "rate_limit.publish_burst: must be a number (got boolean)");
    set("date", "performance", "idle_timeout_sec", "1979-05-27",
        "performance.idle_timeout_sec: must be an integer (got date)");
    set("empty log path", "logging", "info_file_path", str(""),
        "logging.info_file_path: must not be empty");
    QTest::newRow("logging not a table")
        << Doc().set("", "logging", str("x")).text() << "logging: must be a table (got string)";

    // ACL lists.
    set("acl not array", "acl", "sender_cns", str("pub-1"),
        "acl.sender_cns: must be an array of strings (got string)");
    set("acl empty entry", "acl", "admin_cns", R"(["ops", ""])",
        "acl.admin_cns[1]: must be a non-empty string");
    set("acl int entry", "acl", "receiver_cns", R"(["w", 2])",
        "acl.receiver_cns[1]: must be a non-empty string");
    set("acl nested array", "acl", "receiver_cns", R"([["w"]])",
        "acl.receiver_cns[0]: must be a non-empty string");
    set("acl receiver namespaces overlap", "acl", "receiver_cns",
        R"(["receiver_1", "receiver", "receiver_2"])",
        "acl.receiver_cns: \"receiver\" would own the queues and routing keys of \"receiver_1\" "
        "(its namespace \"receiver_...\" includes \"receiver_1_...\"); no receiver CN may "
        "start with another receiver CN followed by \"_\"");
    set("acl receiver namespaces overlap deeper", "acl", "receiver_cns", R"(["a_b_c", "a_b"])",
        "acl.receiver_cns: \"a_b\" would own the queues and routing keys of \"a_b_c\" (its "
        "namespace \"a_b_...\" includes \"a_b_c_...\"); no receiver CN may start with "
        "another receiver CN followed by \"_\"");
    set("allowed_cns empty entry", "admin", "allowed_cns", R"([""])",
        "admin.allowed_cns[0]: must be a non-empty string");
}

void tst_Config::invalid()
{
    QFETCH(QString, toml);
    QFETCH(QString, error);
    const QString path = write(toml);
    const auto loaded = cmq::loadConfig(path);
    QVERIFY2(!loaded.ok(), "loaded although invalid");
    QVERIFY(!loaded.error().contains(u'\n'));
    QCOMPARE(loaded.error(), path + QStringLiteral(": ") + error.replace("$DIR", dir()));
}

void tst_Config::syntaxError_data()
{
    QTest::addColumn<QString>("toml");
    QTest::addColumn<QString>("position"); // line:col

    QTest::newRow("unterminated string") << "[server]\naddress = \"0.0.0.0:5671\n"
                                         << "2:24";
    QTest::newRow("missing value") << "[server]\n\n\naddress =\n"
                                   << "4:10";
    QTest::newRow("duplicate key") << "[server]\naddress = \"a\"\naddress = \"b\"\n"
                                   << "3:11";
    QTest::newRow("duplicate section") << "[server]\n[tls]\n[server]\n"
                                       << "3:1";
    QTest::newRow("bad array") << "[acl]\nsender_cns = [\"a\",\n  x]\n"
                               << "3:3";
}

void tst_Config::syntaxError()
{
    QFETCH(QString, toml);
    QFETCH(QString, position);
    const QString path = write(toml);
    const auto loaded = cmq::loadConfig(path);
    QVERIFY(!loaded.ok());
    const QString prefix = path + u':' + position + QStringLiteral(": ");
    QVERIFY2(loaded.error().startsWith(prefix), qPrintable(loaded.error()));
    QVERIFY(loaded.error().size() > prefix.size()); // toml++'s description follows
    QVERIFY(!loaded.error().contains(u'\n'));
}

void tst_Config::missingFile()
{
    const QString path = dir() + QStringLiteral("/absent.toml");
    const auto missing = cmq::loadConfig(path);
    QVERIFY(!missing.ok());
    QCOMPARE(missing.error(), path + QStringLiteral(": cannot read: No such file or directory"));

    const auto directory = cmq::loadConfig(dir());
    QVERIFY(!directory.ok());
    QCOMPARE(directory.error(),
             dir() + QStringLiteral(": cannot read: file to open is a directory"));
}

void tst_Config::unknownKeys()
{
    const QString toml = Doc()
                             .set("server", "adress", str("0.0.0.0:1"))
                             .set("", "verbose", "true")
                             .set("metrics", "enabled", "true")
                             .set("acl", "publisher_cns", "[]")
                             .text() +
                         QStringLiteral("[server.extra]\nx = 1\n");
    const QString path = write(toml);
    const auto loaded = cmq::loadConfig(path);
    QVERIFY2(loaded.ok(), qPrintable(loaded.error()));
    const QStringList expected = {
        path + QStringLiteral(": unknown key \"verbose\" (ignored)"),
        path + QStringLiteral(": unknown key \"acl.publisher_cns\" (ignored)"),
        path + QStringLiteral(": unknown section \"metrics\" (ignored)"),
        path + QStringLiteral(": unknown key \"server.adress\" (ignored)"),
        path + QStringLiteral(": unknown key \"server.extra\" (ignored)"),
    };
    QStringList warnings = loaded->warnings;
    QStringList sortedExpected = expected;
    warnings.sort();
    sortedExpected.sort();
    QCOMPARE(warnings, sortedExpected);
    // The misspelt key did not leak into the value.
    QCOMPARE(loaded->config.server.address.port, quint16(5671));
}

void tst_Config::unknownRotation()
{
    const QString path = write(Doc().set("logging", "rotation", str("weekly")).text());
    const auto loaded = cmq::loadConfig(path);
    QVERIFY2(loaded.ok(), qPrintable(loaded.error()));
    QCOMPARE(loaded->config.logging.rotation, QStringLiteral("never"));
    QCOMPARE(loaded->warnings,
             QStringList{path + QStringLiteral(": logging.rotation: unknown value \"weekly\", "
                                               "treated as \"never\"")});
}

void tst_Config::relativePaths()
{
    QVERIFY(QDir(dir()).mkpath(QStringLiteral("etc/ciphermq")));
    const QString toml = Doc()
                             .set("tls", "cert_path", str("../../certs/server.crt"))
                             .set("tls", "key_path", str("./../../certs/server.key"))
                             .set("tls", "ca_cert_path", str(dir() + "/certs/ca.crt"))
                             .set("tls", "crl_path", str("../../certs/crl.pem"))
                             .set("logging", "info_file_path", str("log/info.log"))
                             .set("logging", "error_file_path", str("/var/log/e.log"))
                             .set("database", "path", str("../db/cmq.db"))
                             .text();
    write(toml, QStringLiteral("etc/ciphermq/config.toml"));

    // Given relative to the cwd, resolved against the file's own directory.
    const QString previous = QDir::currentPath();
    QVERIFY(QDir::setCurrent(dir() + QStringLiteral("/etc")));
    const auto loaded = cmq::loadConfig(QStringLiteral("ciphermq/config.toml"));
    QVERIFY(QDir::setCurrent(previous));
    QVERIFY2(loaded.ok(), qPrintable(loaded.error()));

    const Config &c = loaded->config;
    const QString etc = dir() + QStringLiteral("/etc/ciphermq");
    QCOMPARE(c.sourcePath, etc + QStringLiteral("/config.toml"));
    QCOMPARE(c.tls.certPath, dir() + QStringLiteral("/certs/server.crt"));
    QCOMPARE(c.tls.keyPath, dir() + QStringLiteral("/certs/server.key"));
    QCOMPARE(c.tls.caCertPath, dir() + QStringLiteral("/certs/ca.crt"));
    QCOMPARE(c.tls.crlPath, dir() + QStringLiteral("/certs/crl.pem"));
    QCOMPARE(c.logging.infoFilePath, etc + QStringLiteral("/log/info.log"));
    QCOMPARE(c.logging.debugFilePath, etc + QStringLiteral("/logs/debug.log"));
    QCOMPARE(c.logging.errorFilePath, QStringLiteral("/var/log/e.log"));
    QCOMPARE(c.database.path, dir() + QStringLiteral("/etc/db/cmq.db"));
}

QTEST_GUILESS_MAIN(tst_Config)
#include "tst_config.moc"
