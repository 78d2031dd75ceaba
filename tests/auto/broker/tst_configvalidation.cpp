// Config validation: the exact message a user sees for each mistake (one row per rule), for a
// syntax error, a missing file, unknown keys.

#include <QTest>

#include "config/config.h"
#include "configtestdoc.h"

using configtest::Doc;
using configtest::keyBytes;
using configtest::str;

class tst_ConfigValidation : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_files.prepare()); }
    void invalid_data();
    void invalid();
    void syntaxError_data();
    void syntaxError();
    void missingFile();
    void unknownKeys();
    void unknownRotation();

private:
    configtest::ConfigDir m_files;
};

void tst_ConfigValidation::invalid_data()
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
    set("update connection not bool", "database", "separate_update_connection", "1",
        "database.separate_update_connection: must be true or false (got integer)");
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
    for (const char *key :
         {"global_rps", "global_burst", "publish_rps", "publish_burst", "ip_global_rps",
          "ip_global_burst", "ip_publish_rps", "ip_publish_burst"}) {
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

void tst_ConfigValidation::invalid()
{
    QFETCH(QString, toml);
    QFETCH(QString, error);
    const QString path = m_files.write(toml);
    const auto loaded = cmq::loadConfig(path);
    QVERIFY2(!loaded.ok(), "loaded although invalid");
    QVERIFY(!loaded.error().contains(u'\n'));
    QCOMPARE(loaded.error(), path + QStringLiteral(": ") + error.replace("$DIR", m_files.path()));
}

void tst_ConfigValidation::syntaxError_data()
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

void tst_ConfigValidation::syntaxError()
{
    QFETCH(QString, toml);
    QFETCH(QString, position);
    const QString path = m_files.write(toml);
    const auto loaded = cmq::loadConfig(path);
    QVERIFY(!loaded.ok());
    const QString prefix = path + u':' + position + QStringLiteral(": ");
    QVERIFY2(loaded.error().startsWith(prefix), qPrintable(loaded.error()));
    QVERIFY(loaded.error().size() > prefix.size()); // toml++'s description follows
    QVERIFY(!loaded.error().contains(u'\n'));
}

void tst_ConfigValidation::missingFile()
{
    const QString path = m_files.path() + QStringLiteral("/absent.toml");
    const auto missing = cmq::loadConfig(path);
    QVERIFY(!missing.ok());
    QCOMPARE(missing.error(), path + QStringLiteral(": cannot read: No such file or directory"));

    const auto directory = cmq::loadConfig(m_files.path());
    QVERIFY(!directory.ok());
    QCOMPARE(directory.error(),
             m_files.path() + QStringLiteral(": cannot read: file to open is a directory"));
}

void tst_ConfigValidation::unknownKeys()
{
    const QString toml = Doc()
                             .set("server", "adress", str("0.0.0.0:1"))
                             .set("", "verbose", "true")
                             .set("metrics", "enabled", "true")
                             .set("acl", "publisher_cns", "[]")
                             .text() +
                         QStringLiteral("[server.extra]\nx = 1\n");
    const QString path = m_files.write(toml);
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

void tst_ConfigValidation::unknownRotation()
{
    const QString path = m_files.write(Doc().set("logging", "rotation", str("weekly")).text());
    const auto loaded = cmq::loadConfig(path);
    QVERIFY2(loaded.ok(), qPrintable(loaded.error()));
    QCOMPARE(loaded->config.logging.rotation, QStringLiteral("never"));
    QCOMPARE(loaded->warnings,
             QStringList{path + QStringLiteral(": logging.rotation: unknown value \"weekly\", "
                                               "treated as \"never\"")});
}

QTEST_GUILESS_MAIN(tst_ConfigValidation)
#include "tst_configvalidation.moc"
