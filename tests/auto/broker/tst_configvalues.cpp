// Config loading, valid values key by key: each row sets one key (or a few that go together)
// of the minimal config, loads it without warnings and reads the key back. Split from
// tst_config (every key of a full file, the defaults, the example, paths).

#include <QTest>

#include "config/config.h"
#include "configtestdoc.h"
#include "configvalues.h"

using configtest::Doc;
using configtest::keyBytes;
using configtest::str;
using configtest::valueOf;

class tst_ConfigValues : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void valid_data();
    void valid();

private:
    configtest::ConfigDir m_files;
};

void tst_ConfigValues::initTestCase()
{
    QVERIFY(m_files.prepare());
}

void tst_ConfigValues::valid_data()
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

void tst_ConfigValues::valid()
{
    QFETCH(QString, toml);
    QFETCH(QString, key);
    QFETCH(QString, expected);
    const auto loaded = cmq::loadConfig(m_files.write(toml));
    QVERIFY2(loaded.ok(), qPrintable(loaded.error()));
    QCOMPARE(loaded->warnings, QStringList());
    QCOMPARE(valueOf(loaded->config, key), expected);
}

QTEST_GUILESS_MAIN(tst_ConfigValues)
#include "tst_configvalues.moc"
