// Broker: the operator's side, beside broker.cpp (start-up, serving, connections, reload,
// shutdown): the metrics and their sources, the admin listener with its audit trail, and the
// metrics endpoint.

#include "broker.h"

#include "admin/adminserver.h"
#include "admin/adminsession.h"
#include "admin/auditlog.h"
#include "core/router.h"
#include "limits/ratelimiter.h"
#include "metrics/brokermetrics.h"
#include "metrics/metricshttpserver.h"
#include "net/session.h"
#include "net/tlslistener.h"
#include "storage/storage.h"

namespace cmq {


metrics::ConnectionSample Broker::dataSample(const Session &session, bool backedUp)
{
    const SessionCounters &c = session.counters();
    return metrics::ConnectionSample{
        QStringLiteral("data"), session.identity().roles, c.bytesIn, c.bytesOut, c.slowEvents,
        backedUp,
        metrics::OpenTalker{session.identity().cn,
                            metrics::TalkerFigures{c.messagesIn, c.deliveriesOut, c.requestsIn,
                                                   c.bytesIn, c.bytesOut}}};
}

void Broker::setUpMetrics()
{
    m_metrics = std::make_unique<metrics::BrokerMetrics>();
    metrics::MetricsSources sources;
    sources.router = m_router.get();
    sources.storage = m_storage.get();
    sources.limiter = m_limiter.get();
    sources.memory = &m_memory;
    sources.connections = [this] {
        QList<metrics::ConnectionSample> all;
        all.reserve(m_sessions.size());
        for (const Session *s : std::as_const(m_sessions))
            all.append(dataSample(*s, s->isBackedUp()));
        if (m_admin) {
            for (const AdminSession *s : m_admin->sessions()) {
                const AdminCounters &c = s->counters();
                all.append(metrics::ConnectionSample{QStringLiteral("admin"), s->identity().roles,
                                                     c.bytesIn, c.bytesOut, 0, !s->isKeepingUp(),
                                                     {}}); // admins are not talkers
            }
        }
        return all;
    };
    sources.handshakesInProgress = [this](const QString &listener) {
        if (listener == QLatin1String("admin"))
            return m_admin ? m_admin->handshakesInProgress() : 0;
        return m_listener.handshakesInProgress();
    };
    sources.cluster = [this] { return m_leadership->status(); };
    m_metrics->setSources(std::move(sources));
    m_metrics->setBrokerInfo(QJsonObject{
        {QStringLiteral("version"), QStringLiteral(CIPHERMQ_VERSION)},
        {QStringLiteral("data_address"), m_config.server.address.text},
        {QStringLiteral("admin_address"),
         m_config.admin.enabled ? m_config.admin.address.text : QString()},
        {QStringLiteral("storage_driver"), m_config.database.driver},
    });
}

Status Broker::startAdmin(const QSslConfiguration &tls)
{
    if (m_config.admin.enabled) {
        if (const Status audit = startAudit(); !audit)
            return audit;
        m_admin = std::make_unique<AdminServer>(AdminContext{
            *m_router, m_acl, m_config, m_revokedSerials, *m_limiter, *m_metrics, m_sessions,
            [this] { return m_nextConnectionId++; }, [this] { return reload(); },
            [this] { return m_listener.handshakesInProgress(); }, *m_audit, *m_storage});
        if (const Status started = m_admin->start(tls, m_config.admin.address); !started)
            return started;
    }
    const HostPort &metricsAddress = m_config.admin.metricsHttpAddress;
    if (metricsAddress.port != 0) {
        m_metricsHttp = std::make_unique<metrics::MetricsHttpServer>(*m_metrics);
        if (!m_config.admin.metricsHttpTls)
            return m_metricsHttp->startPlain(metricsAddress);
        // The same rule as the admin listener decides who may scrape.
        const auto authorize = [this](const QString &cn) -> Status {
            if (cn.isEmpty())
                return failure(QStringLiteral("the client certificate has no Common Name"));
            if (!(m_acl.rolesFor(cn) & Role::Admin))
                return failure(QStringLiteral("CN '%1' does not have the Admin role").arg(cn));
            const QStringList &allowed = m_config.admin.allowedCns;
            if (!allowed.isEmpty() && !allowed.contains(cn))
                return failure(QStringLiteral("CN '%1' is not in admin.allowed_cns").arg(cn));
            return success();
        };
        return m_metricsHttp->startTls(
            metricsAddress, tls, TlsListener::Limits{m_config.server.handshakeTimeoutMs, 16, 8},
            authorize);
    }
    return success();
}

Status Broker::startAudit()
{
    m_audit = std::make_unique<AuditLog>(
        m_config.admin.auditEntries, [storage = m_storage.get()](const storage::AuditRecord &record,
                                                                 std::function<void(Status)> done) {
            storage->saveAudit(record, std::move(done));
        });
    // A standby has no database open yet: its trail is loaded when it takes over (serve()).
    return m_serving ? restoreAudit() : success();
}

Status Broker::restoreAudit()
{
    const Result<QList<storage::AuditRecord>> trail =
        m_storage->loadAudit(m_config.admin.auditEntries);
    if (!trail)
        return failure(QStringLiteral("cannot load the admin audit trail: %1").arg(trail.error()));
    m_audit->restore(trail.value());
    return success();
}

} // namespace cmq
