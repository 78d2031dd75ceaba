#pragma once
// What tst_config and tst_configvalues share: every key of a loaded config as text, so that
// table rows can name the key they check.

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include "config/config.h"

namespace configtest {

inline QString portList(const QList<quint16> &ports)
{
    QStringList text;
    for (quint16 port : ports)
        text.append(QString::number(port));
    return text.join(u',');
}

// Every key of a loaded config as text, so that table rows can name the key they check.
inline QString valueOf(const cmq::Config &c, const QString &key)
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
        {"database.separate_update_connection",
         c.database.separateUpdateConnection ? QStringLiteral("true") : QStringLiteral("false")},
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

} // namespace configtest
