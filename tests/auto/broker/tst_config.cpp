// Config loading: every key read, the defaults, the shipped example, syntax errors and paths.
// The validation rules and their messages are tst_configvalidation.

#include <QDir>
#include <QFile>
#include <QMap>
#include <QTest>

#include "config/config.h"
#include "configtestdoc.h"

using cmq::Config;
using configtest::Doc;
using configtest::keyBytes;
using configtest::str;

namespace {

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
    void relativePaths();

private:
    QString write(const QString &text, const QString &name = QStringLiteral("config.toml"))
    {
        return m_files.write(text, name);
    }
    QString dir() const { return m_files.path(); }

    configtest::ConfigDir m_files;
};

void tst_Config::initTestCase()
{
    QVERIFY(m_files.prepare());
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
    QTest::newRow("ip rate of its own") << Doc()
                                               .set("rate_limit", "publish_rps", "7")
                                               .set("rate_limit", "ip_publish_rps", "70")
                                               .text()
                                        << "rate_limit.ip_publish_rps"
                                        << "70";
    row("tiny burst", "rate_limit", "publish_burst", "0.001", "0.001");
    row("rotation never", "logging", "rotation", str("never"), "never");
    row("keep every log", "logging", "max_files", "0", "0");
    row("one connection", "server", "max_connections", "1", "1");
    row("smallest output buffer", "server", "output_buffer_bytes", "65536", "65536");
    row("metrics on loopback", "admin", "metrics_http_address", str("127.0.0.1:9464"),
        "127.0.0.1 9464");
    row("metrics on ipv6 loopback", "admin", "metrics_http_address", str("[::1]:9464"), "::1 9464");
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
