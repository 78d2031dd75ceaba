#pragma once
// The daemon as one object: storage recovery, the router, the mTLS listener and the
// sessions it accepts. main() only parses arguments and runs it.

#include <functional>
#include <memory>

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QSslConfiguration>
#include <QTimer>

#include "acl/aclmanager.h"
#include "cluster/leadership.h"
#include "config/config.h"
#include "limits/memorybudget.h"
#include "net/datalistener.h"
#include "util/result.h"

namespace cmq {

class AdminServer;
class AuditLog;
class Dispatcher;
class Presence;
class Router;
class Session;
class TlsStream;
struct Services;
namespace storage {
class Storage;
}
namespace limits {
class RateLimiter;
class SteadyClock;
} // namespace limits
namespace metrics {
class BrokerMetrics;
class MetricsHttpServer;
struct ConnectionSample;
} // namespace metrics

class Broker final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Broker)

public:
    explicit Broker(Config config, QObject *parent = nullptr);
    ~Broker() override;

    // Recovers state from the database, then starts listening. Blocking until ready.
    Status start();
    // Tells every client, stops accepting, lets in-flight replies finish (bounded), then
    // calls `done`.
    void shutdown(std::function<void()> done);

    quint16 serverPort() const;
    // Serving the data path (the active node), or a standby that refuses it.
    bool isServing() const { return m_serving; }
    const Leadership::Status &clusterStatus() const { return m_leadership->status(); }
    qsizetype sessionCount() const { return m_sessions.size(); }

    // Re-reads the configuration file and applies [acl], admin.allowed_cns, [rate_limit] and
    // the [tls] files (the `reload` admin command and SIGHUP); connections that lost their
    // access (role, or a certificate the new CRL revokes) are closed. When a TLS file does not
    // load, nothing changes.
    // The reply object of docs/ADMIN-PROTOCOL.md, or the error line's text.
    Result<QJsonObject> reload();

Q_SIGNALS:
    // This node stopped being the active one (or could not start serving as it): it must
    // start over as a standby, from a clean state (main() restarts the process).
    void restartRequested(const QString &reason);

private:
    Status serve();
    void onLeadershipChanged(const Leadership::Status &status);
    QByteArray standbyRefusal() const;
    // The operator's side (brokeroperations.cpp): metrics, the admin listener and its audit
    // trail, the metrics endpoint.
    void setUpMetrics();
    Status startAdmin(const QSslConfiguration &tls);
    Status startAudit();
    Status restoreAudit();
    // A data connection as the metrics see it, open (`backedUp` now) or at its close.
    static metrics::ConnectionSample dataSample(const Session &session, bool backedUp);
    void admit(TlsStream *socket);
    void onSessionClosed(Session *session);
    void finishShutdown();
    void applyMemoryBudget();
    void sampleConnectionMemory();

    Config m_config;
    AclManager m_acl;
    limits::MemoryBudget m_memory; // declared before the router, which reports to it
    QTimer m_memorySampler;
    std::unique_ptr<Leadership> m_leadership; // declared before the storage: released after it
    std::unique_ptr<Router> m_router;
    std::unique_ptr<storage::Storage> m_storage; // declared after the router: destroyed first
    std::unique_ptr<Services> m_services;
    std::unique_ptr<Dispatcher> m_dispatcher;
    std::unique_ptr<limits::SteadyClock> m_clock;
    std::unique_ptr<limits::RateLimiter> m_limiter;
    std::unique_ptr<Presence> m_presence;
    std::unique_ptr<metrics::BrokerMetrics> m_metrics;
    std::unique_ptr<AuditLog> m_audit; // declared before the admin server, which records to it
    std::unique_ptr<AdminServer> m_admin;
    std::unique_ptr<metrics::MetricsHttpServer> m_metricsHttp;
    DataListener m_listener;
    QList<QByteArray> m_revokedSerials; // from tls.crl_path
    QHash<quint64, Session *> m_sessions;
    quint64 m_nextConnectionId = 1;
    bool m_shuttingDown = false;
    bool m_serving = false;
    std::function<void()> m_shutdownDone;
};

} // namespace cmq
