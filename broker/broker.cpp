#include "broker.h"

#include <QTimer>

#include "admin/adminserver.h"
#include "admin/adminsession.h"
#include "admin/auditlog.h"
#include "admin/configreload.h"
#include "brokerlog.h"
#include "cluster/leadership.h"
#include "core/presence.h"
#include "core/router.h"
#include "core/services.h"
#include "handlers/dispatcher.h"
#include "handlers/refusalreplies.h"
#include "limits/ratelimiter.h"
#include "metrics/brokermetrics.h"
#include "metrics/metricshttpserver.h"
#include "net/session.h"
#include "net/tlscontext.h"
#include "net/tlsstream.h"
#include "protocol/replies.h"
#include "storage/storage.h"
#include "tls/tlsidentity.h"
#include "tls/tlslog.h"

namespace cmq {

// How long a graceful shutdown waits for replies still in flight.
constexpr int kShutdownGraceMs = 10000;
// How often connections' buffered output is summed for the memory budget: message bytes are
// counted as they change, but summing every connection on every publish would cost more.
constexpr int kMemorySampleMs = 200;

namespace {

struct ServerTls
{
    QSslConfiguration configuration; // the admin and metrics listeners' (Qt's TLS)
    std::shared_ptr<const TlsContext> dataContext; // the same material, for the data listener
    QList<QByteArray> revokedSerials;
};

// Everything [tls] names, loaded and checked together: at start-up and at each reload, which
// replaces the running material only when all of it loaded.
Result<ServerTls> loadServerTls(const Config::Tls &files)
{
    Result<QSslConfiguration> configuration =
        tls::serverConfiguration(tls::TlsFiles{files.certPath, files.keyPath, files.caCertPath});
    if (!configuration)
        return Result<ServerTls>::failure(configuration.error());
    Result<std::shared_ptr<const TlsContext>> context =
        TlsContext::fromConfiguration(configuration.value());
    if (!context)
        return Result<ServerTls>::failure(context.error());
    ServerTls loaded{std::move(configuration).value(), std::move(context).value(), {}};
    if (!files.crlPath.isEmpty()) {
        // Qt 6.4 has no CRL hook in the handshake, so revocation is checked right after it.
        Result<QList<QByteArray>> revoked =
            tls::loadRevokedSerials(files.crlPath, loaded.configuration.caCertificates());
        if (!revoked)
            return Result<ServerTls>::failure(revoked.error());
        loaded.revokedSerials = std::move(revoked).value();
    }
    return loaded;
}

} // namespace

Broker::Broker(Config config, QObject *parent)
    : QObject(parent), m_config(std::move(config)), m_acl(m_config.acl)
{
}

Broker::~Broker()
{
    m_listener.close();
    for (Session *session : std::as_const(m_sessions)) {
        session->disconnect(this);
        m_router->endpointClosed(session);
        delete session;
    }
    m_sessions.clear();
}

Status Broker::start()
{
    // Leadership first: only the active node reads the database's state and serves it.
    m_leadership = std::make_unique<Leadership>(m_config.database, m_config.cluster);
    const Result<Leadership::Status> leadership = m_leadership->start();
    if (!leadership)
        return failure(leadership.error());
    m_storage = std::make_unique<storage::Storage>(m_config.database, m_config.encryption.aesKey);

    applyMemoryBudget();
    m_memory.onAlarmChanged = [this](bool on) {
        using limits::mebibytes;
        if (on)
            qCWarning(lcBroker,
                      "memory alarm on: %s MiB held (%s MiB messages, %s MiB connection output) "
                      "of the %s MiB budget; publishes are refused until it falls to 90%%",
                      qPrintable(mebibytes(m_memory.used())),
                      qPrintable(mebibytes(m_memory.messageBytes())),
                      qPrintable(mebibytes(m_memory.connectionBytes())),
                      qPrintable(mebibytes(m_memory.budget())));
        else
            qCInfo(lcBroker, "memory alarm off: %s MiB held of the %s MiB budget",
                   qPrintable(mebibytes(m_memory.used())),
                   qPrintable(mebibytes(m_memory.budget())));
    };
    m_memorySampler.setInterval(kMemorySampleMs);
    connect(&m_memorySampler, &QTimer::timeout, this, &Broker::sampleConnectionMemory);
    m_memorySampler.start();
    m_router = std::make_unique<Router>(*m_storage, m_config.performance, m_memory);
    if (leadership->active) {
        if (const Status served = serve(); !served)
            return served;
    }
    connect(m_leadership.get(), &Leadership::changed, this, &Broker::onLeadershipChanged);
    m_clock = std::make_unique<limits::SteadyClock>();
    m_limiter = std::make_unique<limits::RateLimiter>(m_config.rateLimit, *m_clock);
    m_presence =
        std::make_unique<Presence>(m_config.acl.presenceGroups, m_config.acl.presenceDebounceMs);
    m_services = std::make_unique<Services>(
        Services{*m_router, *m_storage, m_acl, m_config, m_limiter.get(), m_presence.get()});
    m_dispatcher = std::make_unique<Dispatcher>(*m_services);
    setUpMetrics();

    const Result<ServerTls> tls = loadServerTls(m_config.tls);
    if (!tls)
        return failure(tls.error());
    m_listener.setContext(tls->dataContext);
    m_revokedSerials = tls->revokedSerials;
    // Slow handshakes (slowloris) are bounded before any identity is known.
    m_listener.setLimits(HandshakeGate::Limits{m_config.server.handshakeTimeoutMs,
                                               m_config.server.maxHandshakes,
                                               m_config.server.maxHandshakesPerIp});
    connect(&m_listener, &DataListener::ready, this, &Broker::admit);
    connect(&m_listener, &DataListener::handshakeFailed, this,
            [this](const QHostAddress &, const QString &reason, const QString &) {
                m_metrics->handshakeFailed(QStringLiteral("data"), reason);
            });
    connect(&m_listener, &DataListener::handshakeRefused, this,
            [this](const QHostAddress &, const QString &reason) {
                m_metrics->connectionRefused(QStringLiteral("data"), reason);
            });
    if (!m_listener.listen(m_config.server.address.host, m_config.server.address.port)) {
        return failure(QStringLiteral("cannot listen on %1: %2")
                           .arg(m_config.server.address.text, m_listener.errorString()));
    }
    if (const Status admin = startAdmin(tls->configuration); !admin)
        return admin;
    return success();
}

Status Broker::serve()
{
    const Leadership::Status &status = m_leadership->status();
    // Each queue's head only: start-up and takeover do not grow with the backlog.
    m_storage->setRecoveryWindow(m_config.performance.queueWindowMessages);
    Result<storage::RecoveredState> recovered = m_storage->openAndRecover(status.epoch);
    if (!recovered)
        return failure(recovered.error());
    m_router->restore(recovered.value());
    m_serving = true;
    if (m_audit) { // a standby taking over: its admin listener started without the trail
        if (const Status audit = restoreAudit(); !audit)
            return audit;
    }
    qCInfo(lcBroker, "active (node %s, epoch %lld): serving %lld queues, %lld messages",
           qUtf8Printable(status.nodeId), status.epoch, qlonglong(recovered->queues.size()),
           qlonglong(recovered->entries.size()));
    return success();
}

void Broker::onLeadershipChanged(const Leadership::Status &status)
{
    if (m_shuttingDown)
        return;
    if (status.active && !m_serving) {
        if (const Status served = serve(); !served) {
            qCCritical(lcBroker, "cannot serve after taking over: %s",
                       qUtf8Printable(served.error()));
            Q_EMIT restartRequested(served.error());
        }
    } else if (!status.active && m_serving) {
        Q_EMIT restartRequested(status.reason);
    }
}

QByteArray Broker::standbyRefusal() const
{
    const Leadership::Status &status = m_leadership->status();
    if (status.activeAddress.isEmpty() || status.activeNodeId == status.nodeId)
        return QByteArrayLiteral("Standby: no active node yet");
    return "Standby: the active node is " + status.activeAddress.toUtf8();
}

Result<QJsonObject> Broker::reload()
{
    const Result<LoadedConfig> loaded = loadConfig(m_config.sourcePath);
    if (!loaded) {
        qCWarning(lcBroker, "reload failed: %s", qPrintable(loaded.error()));
        return Result<QJsonObject>::failure(
            QStringLiteral("Reload failed: %1; the running configuration is unchanged")
                .arg(loaded.error()));
    }
    const Config &next = loaded->config;
    // The TLS files first: a reload applies as a whole or not at all.
    Result<ServerTls> tls = loadServerTls(next.tls);
    if (!tls) {
        qCWarning(lcBroker, "reload failed, the old TLS material stays in force: %s",
                  qPrintable(tls.error()));
        return Result<QJsonObject>::failure(
            QStringLiteral("Reload failed: %1; the running configuration is unchanged")
                .arg(tls.error()));
    }
    const QStringList restart = restartRequired(m_config, next);
    applyReloadable(m_config, next);
    // New handshakes use the new material; established sessions keep theirs.
    m_listener.setContext(tls->dataContext);
    if (m_admin)
        m_admin->setSslConfiguration(tls->configuration);
    if (m_metricsHttp)
        m_metricsHttp->setSslConfiguration(tls->configuration);
    m_revokedSerials = std::move(tls->revokedSerials);
    m_acl = AclManager(m_config.acl);
    m_presence->configure(m_config.acl.presenceGroups, m_config.acl.presenceDebounceMs);
    m_limiter->configure(m_config.rateLimit);
    applyMemoryBudget();

    // Connections keep the roles they were admitted with unless told otherwise.
    int closed = 0, updated = 0;
    const QList<Session *> sessions = m_sessions.values();
    for (Session *session : sessions) {
        const QString &cn = session->identity().cn;
        const Roles roles = m_acl.rolesFor(cn);
        if (tls::isRevoked(session->identity().certificate, m_revokedSerials)) {
            ++closed;
            session->closeWithError(
                protocol::reply::error("Unauthorized: the client certificate has been revoked"));
        } else if (!roles) {
            ++closed;
            session->closeWithError(protocol::reply::error("Unauthorized: certificate CN '" +
                                                           cn.toUtf8() + "' no longer has a role"));
        } else if (roles.toInt() != session->identity().roles.toInt()) {
            ++updated;
            session->setRoles(roles);
        }
    }
    if (m_admin)
        closed += m_admin->recheckSessions();
    const QSslCertificate serverCertificate = tls->configuration.localCertificate();
    qCInfo(lcBroker,
           "configuration reloaded from %s: %d connections closed, %d updated; server "
           "certificate serial %s, %lld revoked serials%s%s",
           qPrintable(m_config.sourcePath), closed, updated,
           serverCertificate.serialNumber().constData(), qlonglong(m_revokedSerials.size()),
           restart.isEmpty() ? "" : "; needs a restart: ", qPrintable(restart.join(u',')));
    return reloadSummary(m_config, closed, updated, restart, serverCertificate,
                         m_revokedSerials.size());
}

void Broker::applyMemoryBudget()
{
    const qint64 mb = m_config.performance.memoryBudgetMb;
    m_memory.setBudget(mb > 0 ? mb << 20 : limits::automaticMemoryBudget());
    qCInfo(lcBroker, "memory budget %s MiB%s", qPrintable(limits::mebibytes(m_memory.budget())),
           mb > 0 ? "" : " (automatic: 40% of the memory available)");
}

void Broker::sampleConnectionMemory()
{
    qint64 bytes = 0;
    for (const Session *session : std::as_const(m_sessions))
        bytes += session->heldOutputBytes();
    if (m_admin) {
        for (const AdminSession *session : m_admin->sessions())
            bytes += session->unsentBytes();
    }
    m_memory.setConnectionBytes(bytes);
}

quint16 Broker::serverPort() const
{
    return m_listener.serverPort();
}

void Broker::admit(TlsStream *socket)
{
    // Only sockets whose handshake verified a client certificate against our CA get here; the
    // remaining checks are about the certificate's identity.
    socket->setParent(this);
    const QSslCertificate certificate = socket->peerCertificate();
    const QString cn = tls::commonName(certificate);
    const auto refuse = [this, socket](const char *reason, const QByteArray &why) {
        qCInfo(tls::lcTls, "refused %s: %s", qPrintable(socket->peerAddress().toString()),
               why.constData());
        m_metrics->connectionRefused(QStringLiteral("data"), QString::fromLatin1(reason));
        socket->write(protocol::reply::error(why));
        socket->disconnectFromHost();
        connect(socket, &TlsStream::disconnected, socket, &QObject::deleteLater);
        // A peer that never reads must not keep the socket forever.
        QTimer::singleShot(5000, socket, &QObject::deleteLater);
    };
    if (m_shuttingDown)
        return refuse("shutting_down", "Server shutting down");
    if (!m_serving)
        return refuse("standby", standbyRefusal());
    if (const auto refused = tls::identityRefusal(certificate, m_revokedSerials))
        return refuse(qPrintable(refused->reason), refused->text.toUtf8());
    const Roles roles = m_acl.rolesFor(cn);
    if (!roles)
        return refuse("unknown_role",
                      "Unauthorized: certificate CN '" + cn.toUtf8() + "' has no role");
    if (m_sessions.size() >= m_config.server.maxConnections) {
        return refuse("max_connections", "Server busy: connection limit reached (" +
                                             QByteArray::number(m_config.server.maxConnections) +
                                             ")");
    }
    // Counted from here until onSessionClosed, and only for connections that get a session:
    // nothing refused above (or failed in the handshake) is ever counted or discounted.
    if (const auto refused = m_limiter->acquireConnection(cn, socket->peerAddress()))
        return refuse(qPrintable(refused->reason), handlers::refusalText(*refused));

    ClientIdentity identity;
    identity.connectionId = m_nextConnectionId++;
    identity.cn = cn;
    identity.roles = roles;
    identity.address = socket->peerAddress();
    identity.port = socket->peerPort();
    identity.certificate = certificate;
    identity.connectedAt = QDateTime::currentDateTimeUtc();

    SessionLimits limits;
    limits.maxLineBytes = m_config.server.maxLineBytes;
    limits.idleTimeoutSec = m_config.performance.idleTimeoutSec;
    limits.heartbeatTimeoutSec = m_config.performance.heartbeatTimeout;
    limits.outputHighWaterBytes = m_config.server.outputBufferBytes;

    auto *session = new Session(socket, identity, limits, *m_dispatcher, this);
    m_sessions.insert(identity.connectionId, session);
    m_metrics->connectionOpened(QStringLiteral("data"));
    session->setPublishObserver(
        [metrics = m_metrics.get()](qint64 ns) { metrics->publishCompleted(ns); });
    connect(session, &Session::closed, this, &Broker::onSessionClosed);
    connect(session, &Session::writable, this, [this](Session *s) {
        m_router->endpointWritable(s);
        m_presence->endpointWritable(*s);
    });
    m_presence->connected(cn);
    qCInfo(lcBroker, "connection %llu: %s (%s) from %s", identity.connectionId, qPrintable(cn),
           qPrintable(rolesToString(roles)), qPrintable(identity.address.toString()));
}

void Broker::onSessionClosed(Session *session)
{
    qCInfo(lcBroker, "connection %llu closed (%s)", session->identity().connectionId,
           qPrintable(session->identity().cn));
    m_sessions.remove(session->identity().connectionId);
    m_router->endpointClosed(session);
    m_presence->unsubscribe(*session);
    m_presence->disconnected(session->identity().cn);
    m_limiter->releaseConnection(session->identity().cn, session->identity().address);
    m_metrics->connectionClosed(dataSample(*session, false));
    if (m_shuttingDown && m_sessions.isEmpty())
        finishShutdown();
}

void Broker::finishShutdown()
{
    if (auto done = std::exchange(m_shutdownDone, {}))
        done();
}

void Broker::shutdown(std::function<void()> done)
{
    if (m_shuttingDown)
        return;
    m_shuttingDown = true;
    m_shutdownDone = std::move(done);
    m_listener.close();
    if (m_admin)
        m_admin->shutdown();
    // Sessions hear of it on the next event-loop pass: a request that reached its socket
    // before the signal may be ready in this same pass, after the signal, and must still be
    // read and answered rather than dropped unread behind the notice.
    QMetaObject::invokeMethod(
        this,
        [this] {
            qCInfo(lcBroker, "shutting down: notifying %lld connections",
                   qlonglong(m_sessions.size()));
            if (m_sessions.isEmpty())
                return finishShutdown();
            for (Session *session : std::as_const(m_sessions))
                session->beginShutdown();
            QTimer::singleShot(kShutdownGraceMs, this, &Broker::finishShutdown);
        },
        Qt::QueuedConnection);
}

} // namespace cmq
