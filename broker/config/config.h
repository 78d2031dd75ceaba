#pragma once
// The broker's configuration: every section and key of the seed's config.toml, typed, with
// the seed's defaults. Loaded and validated by loadConfig(); nothing else reads the file.

#include <QByteArray>
#include <QHostAddress>
#include <QString>
#include <QStringList>

#include "util/result.h"

namespace cmq {

struct HostPort
{
    QHostAddress host;
    quint16 port = 0;
    QString text; // as written in the file, for messages
};

struct Config
{
    QString sourcePath; // the file it came from (absolute)

    struct Server {
        HostPort address;                 // "0.0.0.0:5671"
        QString connectionType = "tls";   // only "tls" is supported
        qint64 maxLineBytes = 1 << 20;    // max_line_bytes: longest request line accepted
        int handshakeTimeoutMs = 10000;   // handshake_timeout_ms
        int maxConnections = 20000;       // max_connections: open data connections, all clients
        int maxHandshakes = 256;          // max_handshakes: connections still in TLS handshake
        int maxHandshakesPerIp = 32;      // max_handshakes_per_ip: the same, from one address
        qint64 outputBufferBytes = 4 << 20; // output_buffer_bytes: unsent output per connection
    } server;

    struct Tls {
        QString certPath, keyPath, caCertPath; // cert_path, key_path, ca_cert_path
        QString crlPath;                        // crl_path (optional)
    } tls;

    struct Logging {
        QString level = "info";     // trace|debug|info|warn|error
        QString rotation = "daily"; // hourly|daily|never (anything else = never, with a warning)
        QString infoFilePath = "logs/info.log";
        QString debugFilePath = "logs/debug.log";
        QString errorFilePath = "logs/error.log";
        int maxSizeMb = 50;
        int maxFiles = 14;          // max_files: rotated files kept per log; 0 = all
    } logging;

    struct Database {
        QString driver = "sqlite"; // postgresql | sqlite
        QString path = "data/ciphermq.db"; // sqlite file
        // host/port: a string (integer) or a list, tried in order with
        // target_session_attrs=read-write, so a promoted PostgreSQL standby is found by itself.
        // One port serves every host; otherwise one port per host.
        QStringList hosts = {QStringLiteral("127.0.0.1")};
        QList<quint16> ports = {5432};
        QString user = "ciphermq";
        QString password;
        QString dbname = "ciphermq";
        int connectAttempts = 5;      // connect_attempts
        int connectRetryDelayMs = 5000; // connect_retry_delay_ms
        // PostgreSQL: delivery updates (deliveries, acks, evictions) written on a connection of
        // their own, beside the publishes rather than between them (docs/STORAGE.md).
        bool separateUpdateConnection = true; // separate_update_connection
    } database;

    struct Encryption {
        QString algorithm = "x25519_chacha20_poly1305";
        QByteArray aesKey; // decoded, exactly 32 bytes
    } encryption;

    struct Performance {
        qint64 maxQueueSize = 10000;
        qint64 messageTtlMs = 0; // message_ttl_ms: a queue's default message TTL; 0 = none
        qint64 maxQueueBytes = qint64(1) << 30; // max_queue_bytes: envelope bytes; 0 = no limit
        int memoryBudgetMb = 0; // memory_budget_mb: broker-wide; 0 = automatic (40% of memory)
        // A queue's head held in memory; the rest of its backlog stays in the database.
        int queueWindowMessages = 2000;               // queue_window_messages
        qint64 queueWindowBytes = qint64(8) << 20;    // queue_window_bytes
        int queueWindowBudgetMb = 256;                // queue_window_budget_mb: all windows
        QString overflowPolicy = "drop-head"; // drop-head | reject-publish
        int heartbeatTimeout = 60;   // seconds
        int cleanupInterval = 3000;  // seconds
        int consumerCleanupInterval = 60; // seconds
        int idleTimeoutSec = 60;
        int defaultPrefetch = 256;   // default_prefetch: unacked deliveries per consumer
        int ackTimeoutSec = 1800;    // ack_timeout_sec: unacked deliveries are requeued after
        // deliver_before_commit: hand a publish to its queues' consumers while its commit runs
        // (the publisher's ACK still waits for the commit; docs/STORAGE.md).
        bool deliverBeforeCommit = false;
        // Per certificate CN: queues it owns, exchanges it created, bindings to its queues.
        int maxQueuesPerCn = 1000;     // max_queues_per_cn
        int maxExchangesPerCn = 100;   // max_exchanges_per_cn
        int maxBindingsPerCn = 10000;  // max_bindings_per_cn
    } performance;

    struct Admin {
        bool enabled = false;
        HostPort address;           // "127.0.0.1:9091"
        QStringList allowedCns;
        QStringList readonlyCns;     // readonly_cns: may watch and export, every action refused
        int auditEntries = 1000;     // audit_entries: the audit ring held in memory
        HostPort metricsHttpAddress; // metrics_http_address: /metrics over HTTP; port 0 = off
        bool metricsHttpTls = false; // metrics_http_tls: require mTLS (always off loopback)
    } admin;

    struct RateLimit {
        bool enabled = true;
        double globalRps = 100.0;
        double globalBurst = 200.0;
        double publishRps = 50.0;
        double publishBurst = 100.0;
        // The per-IP buckets; when a key is absent, the per-CN value above (the seed's one
        // setting for both). Raise them for clients behind a shared NAT address.
        double ipGlobalRps = 100.0;
        double ipGlobalBurst = 200.0;
        double ipPublishRps = 50.0;
        double ipPublishBurst = 100.0;
        int maxConnectionsPerIp = 50;
        int maxConnectionsPerCn = 20;
    } rateLimit;

    struct Acl {
        QStringList senderCns, receiverCns, adminCns;
        // presence_groups: identities in one group are told when the others connect and leave
        // (the `presence` command); nobody else is. Empty: presence is refused to everyone.
        QList<QStringList> presenceGroups;
        int presenceDebounceMs = 2000; // presence_debounce_ms: how long a leaver may come back
    } acl;

    // Leadership among brokers sharing one database (docs/OPERATIONS.md, High availability).
    struct Cluster {
        QString nodeId;          // node_id; default "<host name>:<server port>"
        QString clientAddress;   // client_address: sent to clients by a standby; default
                                 // server.address, with the host name for 0.0.0.0 / ::
        int leaseMs = 10000;     // lease_ms: an active that cannot renew for this long steps down
        int pollMs = 1000;       // poll_ms: how often the lease is renewed, and leadership tried
    } cluster;
};

struct LoadedConfig
{
    Config config;
    QStringList warnings; // unknown keys and other things worth saying but not fatal
};

// Reads and validates the file. Relative paths inside it are resolved against the file's
// directory. The error names the file, the key and what is wrong, in one line.
Result<LoadedConfig> loadConfig(const QString &path);

} // namespace cmq
