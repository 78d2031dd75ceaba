// Config loading: every key read, the defaults, the shipped example, syntax errors and paths.
// Valid values key by key are tst_configvalues; the validation rules and their messages are
// tst_configvalidation.

#include <QDir>
#include <QFile>
#include <QTest>

#include "config/config.h"
#include "configtestdoc.h"
#include "configvalues.h"

using cmq::Config;
using configtest::Doc;
using configtest::keyBytes;
using configtest::str;
using configtest::valueOf;

namespace {

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
separate_update_connection = false

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
    {"database.separate_update_connection", "false"},
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
