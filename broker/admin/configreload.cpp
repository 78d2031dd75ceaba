#include "admin/configreload.h"

#include <QJsonArray>

#include "admin/snapshot.h"

namespace cmq {

static bool same(const HostPort &a, const HostPort &b)
{
    return a.host == b.host && a.port == b.port;
}

QStringList restartRequired(const Config &r, const Config &n)
{
    QStringList keys;
    const auto check = [&keys](bool differs, const char *key) {
        if (differs)
            keys.append(QString::fromLatin1(key));
    };
    check(!same(r.server.address, n.server.address), "server.address");
    check(r.server.maxLineBytes != n.server.maxLineBytes, "server.max_line_bytes");
    check(r.server.handshakeTimeoutMs != n.server.handshakeTimeoutMs,
          "server.handshake_timeout_ms");
    check(r.server.maxConnections != n.server.maxConnections, "server.max_connections");
    check(r.server.maxHandshakes != n.server.maxHandshakes, "server.max_handshakes");
    check(r.server.maxHandshakesPerIp != n.server.maxHandshakesPerIp,
          "server.max_handshakes_per_ip");
    check(r.server.outputBufferBytes != n.server.outputBufferBytes, "server.output_buffer_bytes");
    check(r.logging.level != n.logging.level, "logging.level");
    check(r.logging.rotation != n.logging.rotation, "logging.rotation");
    check(r.logging.infoFilePath != n.logging.infoFilePath, "logging.info_file_path");
    check(r.logging.debugFilePath != n.logging.debugFilePath, "logging.debug_file_path");
    check(r.logging.errorFilePath != n.logging.errorFilePath, "logging.error_file_path");
    check(r.logging.maxSizeMb != n.logging.maxSizeMb, "logging.max_size_mb");
    check(r.logging.maxFiles != n.logging.maxFiles, "logging.max_files");
    check(r.database.driver != n.database.driver || r.database.path != n.database.path ||
              r.database.hosts != n.database.hosts || r.database.ports != n.database.ports ||
              r.database.user != n.database.user || r.database.password != n.database.password ||
              r.database.dbname != n.database.dbname ||
              r.database.separateUpdateConnection != n.database.separateUpdateConnection,
          "database");
    check(r.encryption.aesKey != n.encryption.aesKey, "encryption.aes_key");
    check(r.performance.maxQueueSize != n.performance.maxQueueSize ||
              r.performance.maxQueueBytes != n.performance.maxQueueBytes ||
              r.performance.overflowPolicy != n.performance.overflowPolicy ||
              r.performance.heartbeatTimeout != n.performance.heartbeatTimeout ||
              r.performance.idleTimeoutSec != n.performance.idleTimeoutSec ||
              r.performance.defaultPrefetch != n.performance.defaultPrefetch ||
              r.performance.ackTimeoutSec != n.performance.ackTimeoutSec ||
              r.performance.cleanupInterval != n.performance.cleanupInterval ||
              r.performance.consumerCleanupInterval != n.performance.consumerCleanupInterval ||
              r.performance.maxQueuesPerCn != n.performance.maxQueuesPerCn ||
              r.performance.maxExchangesPerCn != n.performance.maxExchangesPerCn ||
              r.performance.maxBindingsPerCn != n.performance.maxBindingsPerCn,
          "performance");
    check(r.performance.deliverBeforeCommit != n.performance.deliverBeforeCommit,
          "performance.deliver_before_commit");
    check(r.admin.enabled != n.admin.enabled, "admin.enabled");
    check(!same(r.admin.address, n.admin.address), "admin.address");
    check(!same(r.admin.metricsHttpAddress, n.admin.metricsHttpAddress),
          "admin.metrics_http_address");
    check(r.admin.metricsHttpTls != n.admin.metricsHttpTls, "admin.metrics_http_tls");
    check(r.cluster.nodeId != n.cluster.nodeId || r.cluster.clientAddress != n.cluster.clientAddress
              || r.cluster.leaseMs != n.cluster.leaseMs || r.cluster.pollMs != n.cluster.pollMs,
          "cluster");
    check(r.admin.auditEntries != n.admin.auditEntries, "admin.audit_entries");
    return keys;
}

void applyReloadable(Config &running, const Config &next)
{
    running.acl = next.acl;
    running.admin.allowedCns = next.admin.allowedCns;
    running.admin.readonlyCns = next.admin.readonlyCns;
    running.rateLimit = next.rateLimit;
    running.performance.memoryBudgetMb = next.performance.memoryBudgetMb;
    running.tls = next.tls; // the files themselves are loaded by the caller
}

QJsonObject reloadSummary(const Config &c, int connectionsClosed, int connectionsUpdated,
                          const QStringList &restart, const QSslCertificate &serverCertificate,
                          qsizetype revokedSerials)
{
    QJsonObject rateLimit = snapshot::rateLimitSettings(c.rateLimit);
    rateLimit.insert(QStringLiteral("enabled"), c.rateLimit.enabled);
    return QJsonObject{
        {QStringLiteral("ok"), true},
        {QStringLiteral("action"), QStringLiteral("reload")},
        {QStringLiteral("config"), c.sourcePath},
        {QStringLiteral("acl"),
         QJsonObject{{QStringLiteral("sender_cns"), qint64(c.acl.senderCns.size())},
                     {QStringLiteral("receiver_cns"), qint64(c.acl.receiverCns.size())},
                     {QStringLiteral("admin_cns"), qint64(c.acl.adminCns.size())}}},
        {QStringLiteral("admin_allowed_cns"), qint64(c.admin.allowedCns.size())},
        {QStringLiteral("rate_limit"), rateLimit},
        {QStringLiteral("tls"),
         QJsonObject{{QStringLiteral("certificate_serial"),
                      QString::fromLatin1(serverCertificate.serialNumber())},
                     {QStringLiteral("certificate_not_after"),
                      serverCertificate.expiryDate().toUTC().toString(Qt::ISODate)},
                     {QStringLiteral("revoked_serials"), qint64(revokedSerials)}}},
        {QStringLiteral("connections_closed"), connectionsClosed},
        {QStringLiteral("connections_updated"), connectionsUpdated},
        {QStringLiteral("restart_required"), QJsonArray::fromStringList(restart)},
    };
}

} // namespace cmq
