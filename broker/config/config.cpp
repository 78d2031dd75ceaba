#include "config.h"

#include <limits>
#include <utility>

#include <QFile>
#include <QFileInfo>
#include <QSysInfo>

#include "tomlreader.h"

namespace cmq {

namespace {

constexpr int kIntMax = std::numeric_limits<int>::max();
// Durations in seconds are turned into millisecond timers (int), so they must fit once
// multiplied by 1000: about 24.8 days.
constexpr int kMaxSeconds = kIntMax / 1000;
constexpr qint64 kMinLineBytes = 1024;
constexpr qint64 kMaxLineBytes = 64 * 1024 * 1024;
constexpr qint64 kMinOutputBufferBytes = 64 * 1024;
constexpr qint64 kMaxOutputBufferBytes = 1024 * 1024 * 1024;

// What resources/config.toml ships with instead of a key; the installer replaces it with the
// output of `openssl rand -base64 32`. Recognised so that a forgotten step gets a clear error.
constexpr auto kAesKeyPlaceholder = QLatin1String("@CIPHERMQ_AES_KEY@");

HostPort defaultAddress(const QString &text)
{
    QString why;
    return parseHostPort(text, &why).value();
}

// Opened rather than stat'ed: that is what the TLS setup will do, and it gets the real reason.
void checkReadable(TomlReader &r, const char *key, const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        r.fail(r.qualified(key),
               QStringLiteral("cannot read \"%1\": %2").arg(path, file.errorString()));
}

void readServer(TomlReader &r, Config::Server &s)
{
    if (!r.enterSection("server"))
        r.fail(QStringLiteral("server"), QStringLiteral("section is required"));
    s.address = defaultAddress(QStringLiteral("0.0.0.0:5671"));
    r.readAddress("address", s.address);
    r.readChoice("connection_type", s.connectionType, {"tls"});
    r.readInt("max_line_bytes", s.maxLineBytes, kMinLineBytes, kMaxLineBytes);
    r.readInt("handshake_timeout_ms", s.handshakeTimeoutMs, 1, kIntMax);
    r.readInt("max_connections", s.maxConnections, 1, kIntMax);
    r.readInt("max_handshakes", s.maxHandshakes, 1, kIntMax);
    r.readInt("max_handshakes_per_ip", s.maxHandshakesPerIp, 1, kIntMax);
    r.readInt("output_buffer_bytes", s.outputBufferBytes, kMinOutputBufferBytes,
              kMaxOutputBufferBytes);
}

void readTls(TomlReader &r, Config::Tls &t, const QString &connectionType)
{
    const bool present = r.enterSection("tls");
    r.readPath("cert_path", t.certPath);
    r.readPath("key_path", t.keyPath);
    r.readPath("ca_cert_path", t.caCertPath);
    r.readPath("crl_path", t.crlPath);
    if (connectionType != QLatin1String("tls"))
        return;
    if (!present)
        r.fail(QStringLiteral("tls"), QStringLiteral("section is required when "
                                                     "server.connection_type is \"tls\""));
    const std::pair<const char *, const QString &> required[] = {
        {"cert_path", t.certPath}, {"key_path", t.keyPath}, {"ca_cert_path", t.caCertPath}};
    for (const auto &[key, path] : required) {
        if (path.isEmpty())
            r.fail(r.qualified(key), QStringLiteral("is required when server.connection_type "
                                                    "is \"tls\""));
        else
            checkReadable(r, key, path);
    }
    if (!t.crlPath.isEmpty())
        checkReadable(r, "crl_path", t.crlPath);
}

void readLogging(TomlReader &r, Config::Logging &l)
{
    r.enterSection("logging");
    r.readChoice("level", l.level, {"trace", "debug", "info", "warn", "error"});
    QString rotation = l.rotation;
    r.readString("rotation", rotation);
    if (rotation == QLatin1String("hourly") || rotation == QLatin1String("daily") ||
        rotation == QLatin1String("never")) {
        l.rotation = rotation;
    } else {
        // The seed treats any other value as "never"; kept, but no longer silently.
        r.warn(r.qualified("rotation"),
               QStringLiteral("unknown value \"%1\", treated as \"never\"").arg(rotation));
        l.rotation = QStringLiteral("never");
    }
    const std::pair<const char *, QString &> files[] = {{"info_file_path", l.infoFilePath},
                                                        {"debug_file_path", l.debugFilePath},
                                                        {"error_file_path", l.errorFilePath}};
    for (const auto &[key, path] : files) {
        r.readPath(key, path);
        if (path.isEmpty())
            r.fail(r.qualified(key), QStringLiteral("must not be empty"));
    }
    r.readInt("max_size_mb", l.maxSizeMb, 1, kIntMax);
    r.readInt("max_files", l.maxFiles, 0, kIntMax);
}

void readDatabase(TomlReader &r, Config::Database &d)
{
    r.enterSection("database");
    r.readChoice("driver", d.driver, {"postgresql", "sqlite"});
    r.readPath("path", d.path);
    r.readStringOrList("host", d.hosts);
    r.readPortOrList("port", d.ports);
    r.readString("user", d.user);
    r.readString("password", d.password);
    r.readString("dbname", d.dbname);
    r.readInt("connect_attempts", d.connectAttempts, 1, kIntMax);
    r.readInt("connect_retry_delay_ms", d.connectRetryDelayMs, 0, kIntMax);
    r.readBool("separate_update_connection", d.separateUpdateConnection);
    if (d.driver == QLatin1String("sqlite")) {
        if (d.path.isEmpty())
            r.fail(r.qualified("path"), QStringLiteral("must not be empty when driver is "
                                                       "\"sqlite\""));
        return;
    }
    if (d.ports.size() != 1 && d.ports.size() != d.hosts.size())
        r.fail(r.qualified("port"),
               QStringLiteral("must be one port or one per host (%1 hosts, %2 ports)")
                   .arg(d.hosts.size())
                   .arg(d.ports.size()));
    for (const QString &host : d.hosts) {
        if (host.contains(u','))
            r.fail(r.qualified("host"),
                   QStringLiteral("\"%1\" is not one host name or address (list several as an "
                                  "array)")
                       .arg(host));
    }
    const QString emptyHost = d.hosts.contains(QString()) ? QString() : d.hosts.value(0);
    const std::pair<const char *, const QString &> required[] = {
        {"host", emptyHost}, {"user", d.user}, {"dbname", d.dbname}};
    for (const auto &[key, value] : required) {
        if (value.isEmpty())
            r.fail(r.qualified(key), QStringLiteral("must not be empty when driver is "
                                                    "\"postgresql\""));
    }
}

void readEncryption(TomlReader &r, Config::Encryption &e)
{
    if (!r.enterSection("encryption"))
        r.fail(QStringLiteral("encryption"), QStringLiteral("section is required"));
    r.readChoice("algorithm", e.algorithm, {"x25519_chacha20_poly1305"});
    QString text;
    r.readString("aes_key", text);
    text = text.trimmed();
    const QString key = r.qualified("aes_key");
    const QString howTo = QStringLiteral("generate one with \"openssl rand -base64 32\"");
    if (text.isEmpty())
        return r.fail(key, QStringLiteral("is required; %1").arg(howTo));
    if (text == kAesKeyPlaceholder)
        return r.fail(
            key,
            QStringLiteral("is still the placeholder \"%1\"; %2").arg(kAesKeyPlaceholder, howTo));
    const auto decoded =
        QByteArray::fromBase64Encoding(text.toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
    if (decoded.decodingStatus != QByteArray::Base64DecodingStatus::Ok)
        return r.fail(key, QStringLiteral("is not valid base64; %1").arg(howTo));
    if (decoded.decoded.size() != 32)
        return r.fail(key, QStringLiteral("must be base64 of exactly 32 bytes (got %1)")
                               .arg(decoded.decoded.size()));
    e.aesKey = decoded.decoded;
}

void readPerformance(TomlReader &r, Config::Performance &p)
{
    r.enterSection("performance");
    r.readInt("max_queue_size", p.maxQueueSize, 1, std::numeric_limits<qint64>::max());
    r.readInt("max_queue_bytes", p.maxQueueBytes, 0, std::numeric_limits<qint64>::max());
    r.readInt("message_ttl_ms", p.messageTtlMs, 0, qint64(31536000000));
    r.readInt("memory_budget_mb", p.memoryBudgetMb, 0, std::numeric_limits<int>::max());
    r.readInt("queue_window_messages", p.queueWindowMessages, 2, 1000000);
    r.readInt("queue_window_bytes", p.queueWindowBytes, 1, std::numeric_limits<qint64>::max());
    r.readInt("queue_window_budget_mb", p.queueWindowBudgetMb, 1, std::numeric_limits<int>::max());
    r.readChoice("overflow_policy", p.overflowPolicy, {"drop-head", "reject-publish"});
    r.readInt("heartbeat_timeout", p.heartbeatTimeout, 1, kMaxSeconds);
    r.readInt("cleanup_interval", p.cleanupInterval, 1, kMaxSeconds);
    r.readInt("consumer_cleanup_interval", p.consumerCleanupInterval, 1, kMaxSeconds);
    r.readInt("idle_timeout_sec", p.idleTimeoutSec, 1, kMaxSeconds);
    r.readInt("default_prefetch", p.defaultPrefetch, 0, 65535);
    r.readInt("ack_timeout_sec", p.ackTimeoutSec, 1, kMaxSeconds);
    r.readBool("deliver_before_commit", p.deliverBeforeCommit);
    r.readInt("max_queues_per_cn", p.maxQueuesPerCn, 1, std::numeric_limits<int>::max());
    r.readInt("max_exchanges_per_cn", p.maxExchangesPerCn, 1, std::numeric_limits<int>::max());
    r.readInt("max_bindings_per_cn", p.maxBindingsPerCn, 1, std::numeric_limits<int>::max());
}

void readAdmin(TomlReader &r, Config::Admin &a)
{
    r.enterSection("admin");
    r.readBool("enabled", a.enabled);
    a.address = defaultAddress(QStringLiteral("127.0.0.1:9091"));
    r.readAddress("address", a.address);
    r.readStringList("allowed_cns", a.allowedCns);
    r.readStringList("readonly_cns", a.readonlyCns);
    r.readInt("audit_entries", a.auditEntries, 1, 100000);
    QString metrics;
    r.readString("metrics_http_address", metrics);
    r.readBool("metrics_http_tls", a.metricsHttpTls);
    if (metrics.isEmpty())
        return; // off
    QString why;
    const std::optional<HostPort> address = parseHostPort(metrics, &why);
    if (!address)
        return r.fail(r.qualified("metrics_http_address"),
                      QStringLiteral("%1 (got \"%2\")").arg(why, metrics));
    // Plain HTTP would hand the metrics to anyone who can reach the port.
    if (!a.metricsHttpTls && !address->host.isLoopback())
        return r.fail(r.qualified("metrics_http_address"),
                      QStringLiteral("must be a loopback address unless admin.metrics_http_tls "
                                     "is true (got \"%1\")")
                          .arg(metrics));
    a.metricsHttpAddress = *address;
}

void readRateLimit(TomlReader &r, Config::RateLimit &l)
{
    r.enterSection("rate_limit");
    r.readBool("enabled", l.enabled);
    r.readPositiveDouble("global_rps", l.globalRps);
    r.readPositiveDouble("global_burst", l.globalBurst);
    r.readPositiveDouble("publish_rps", l.publishRps);
    r.readPositiveDouble("publish_burst", l.publishBurst);
    l.ipGlobalRps = l.globalRps;
    l.ipGlobalBurst = l.globalBurst;
    l.ipPublishRps = l.publishRps;
    l.ipPublishBurst = l.publishBurst;
    r.readPositiveDouble("ip_global_rps", l.ipGlobalRps);
    r.readPositiveDouble("ip_global_burst", l.ipGlobalBurst);
    r.readPositiveDouble("ip_publish_rps", l.ipPublishRps);
    r.readPositiveDouble("ip_publish_burst", l.ipPublishBurst);
    r.readInt("max_connections_per_ip", l.maxConnectionsPerIp, 1, kIntMax);
    r.readInt("max_connections_per_cn", l.maxConnectionsPerCn, 1, kIntMax);
}

void readAcl(TomlReader &r, Config::Acl &a)
{
    r.enterSection("acl");
    r.readStringList("sender_cns", a.senderCns);
    r.readStringList("receiver_cns", a.receiverCns);
    r.readStringList("admin_cns", a.adminCns);
    r.readStringGroups("presence_groups", a.presenceGroups);
    r.readInt("presence_debounce_ms", a.presenceDebounceMs, 0, 600000);
    // A receiver's namespace is "<cn>_...": if one CN followed by "_" starts another, the first
    // could use every queue and routing key of the second.
    for (const QString &outer : std::as_const(a.receiverCns)) {
        for (const QString &inner : std::as_const(a.receiverCns)) {
            if (inner.startsWith(outer + u'_'))
                return r.fail(r.qualified("receiver_cns"),
                              QStringLiteral("\"%1\" would own the queues and routing keys of "
                                             "\"%2\" (its namespace \"%1_...\" includes "
                                             "\"%2_...\"); no receiver CN may start with "
                                             "another receiver CN followed by \"_\"")
                                  .arg(outer, inner));
        }
    }
}

void readCluster(TomlReader &r, Config::Cluster &c, const HostPort &server)
{
    r.enterSection("cluster");
    const bool anyHost = server.host == QHostAddress::AnyIPv4 || server.host == QHostAddress::Any ||
                         server.host == QHostAddress::AnyIPv6;
    const QString host = anyHost ? QSysInfo::machineHostName() : server.host.toString();
    const QString hostPort = QStringLiteral("%1:%2").arg(host).arg(server.port);
    c.nodeId = QStringLiteral("%1:%2").arg(QSysInfo::machineHostName()).arg(server.port);
    c.clientAddress = anyHost ? hostPort : server.text;
    r.readString("node_id", c.nodeId);
    r.readString("client_address", c.clientAddress);
    r.readInt("lease_ms", c.leaseMs, 200, kIntMax);
    r.readInt("poll_ms", c.pollMs, 10, kIntMax);
    if (c.nodeId.isEmpty())
        r.fail(r.qualified("node_id"), QStringLiteral("must not be empty"));
    if (qint64(c.pollMs) * 2 > c.leaseMs)
        r.fail(r.qualified("poll_ms"),
               QStringLiteral("must be at most half of cluster.lease_ms (%1), so that a lease "
                              "is renewed at least twice before it runs out")
                   .arg(c.leaseMs));
}

} // namespace

Result<LoadedConfig> loadConfig(const QString &path)
{
    using R = Result<LoadedConfig>;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return R::failure(QStringLiteral("%1: cannot read: %2").arg(path, file.errorString()));
    const QByteArray text = file.readAll();
    if (file.error() != QFileDevice::NoError)
        return R::failure(QStringLiteral("%1: cannot read: %2").arg(path, file.errorString()));

    // toml++ is built with exceptions; they stop here, on the caller's side of the event loop.
    toml::table root;
    try {
        root = toml::parse(std::string_view(text.constData(), size_t(text.size())),
                           path.toStdString());
    } catch (const toml::parse_error &e) {
        const std::string_view what = e.description();
        return R::failure(QStringLiteral("%1:%2:%3: %4")
                              .arg(path)
                              .arg(e.source().begin.line)
                              .arg(e.source().begin.column)
                              .arg(QString::fromUtf8(what.data(), qsizetype(what.size()))));
    }

    LoadedConfig loaded;
    Config &c = loaded.config;
    const QFileInfo info(path);
    c.sourcePath = info.absoluteFilePath();
    TomlReader r(root, path, info.absoluteDir());
    readServer(r, c.server);
    readTls(r, c.tls, c.server.connectionType);
    readLogging(r, c.logging);
    readDatabase(r, c.database);
    readEncryption(r, c.encryption);
    readPerformance(r, c.performance);
    readAdmin(r, c.admin);
    readRateLimit(r, c.rateLimit);
    readAcl(r, c.acl);
    readCluster(r, c.cluster, c.server.address);
    r.reportUnknown();
    if (!r.ok())
        return R::failure(r.error());
    loaded.warnings = r.warnings();
    return loaded;
}

} // namespace cmq
