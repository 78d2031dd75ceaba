#include "broker.h"

#include <QLoggingCategory>
#include <QSslSocket>
#include <QTimer>

#include "core/dispatcher.h"
#include "core/router.h"
#include "core/services.h"
#include "net/session.h"
#include "protocol/replies.h"
#include "storage/storage.h"
#include "tls/tlsidentity.h"

Q_LOGGING_CATEGORY(lcBroker, "ciphermq.broker")
Q_LOGGING_CATEGORY(lcTls, "ciphermq.tls")

namespace cmq {

// How long a graceful shutdown waits for replies still in flight.
constexpr int kShutdownGraceMs = 10000;

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
    m_storage = std::make_unique<storage::Storage>(m_config.database, m_config.encryption.aesKey);
    Result<storage::RecoveredState> recovered = m_storage->openAndRecover();
    if (!recovered)
        return failure(recovered.error());

    m_router = std::make_unique<Router>(*m_storage, m_config.performance);
    m_router->restore(recovered.value());
    m_services = std::make_unique<Services>(Services{*m_router, *m_storage, m_acl, m_config});
    m_dispatcher = std::make_unique<Dispatcher>(*m_services);

    const Result<QSslConfiguration> tls = tls::serverConfiguration(
        tls::TlsFiles{m_config.tls.certPath, m_config.tls.keyPath, m_config.tls.caCertPath});
    if (!tls)
        return failure(tls.error());
    m_listener.setSslConfiguration(tls.value());
    if (!m_config.tls.crlPath.isEmpty()) {
        // Qt 6.4 has no CRL hook in the handshake, so revocation is checked right after it.
        Result<QList<QByteArray>> revoked =
            tls::loadRevokedSerials(m_config.tls.crlPath, tls->caCertificates());
        if (!revoked)
            return failure(revoked.error());
        m_revokedSerials = std::move(revoked).value();
    }
    m_listener.setHandshakeTimeout(m_config.server.handshakeTimeoutMs);
    connect(&m_listener, &QSslServer::pendingConnectionAvailable, this, &Broker::onClientReady);
    connect(&m_listener, &QSslServer::sslErrors, this,
            [](QSslSocket *socket, const QList<QSslError> &errors) {
                qCInfo(lcTls, "handshake from %s refused: %s",
                       qPrintable(socket->peerAddress().toString()),
                       qPrintable(errors.value(0).errorString()));
            });
    connect(&m_listener, &QSslServer::errorOccurred, this,
            [](QSslSocket *socket, QAbstractSocket::SocketError) {
                qCDebug(lcTls, "connection from %s failed before the session: %s",
                        qPrintable(socket->peerAddress().toString()),
                        qPrintable(socket->errorString()));
            });
    if (!m_listener.listen(m_config.server.address.host, m_config.server.address.port)) {
        return failure(QStringLiteral("cannot listen on %1: %2")
                           .arg(m_config.server.address.text, m_listener.errorString()));
    }
    return success();
}

quint16 Broker::serverPort() const
{
    return m_listener.serverPort();
}

void Broker::onClientReady()
{
    while (QTcpSocket *next = m_listener.nextPendingConnection()) {
        if (auto *socket = qobject_cast<QSslSocket *>(next))
            admit(socket);
        else
            next->deleteLater();
    }
}

void Broker::admit(QSslSocket *socket)
{
    // Only sockets whose handshake verified a client certificate against our CA get here; the
    // remaining checks are about the certificate's identity.
    socket->setParent(this);
    const QSslCertificate certificate = socket->peerCertificate();
    const QString cn = tls::commonName(certificate);
    const auto refuse = [socket](const QByteArray &why) {
        qCInfo(lcTls, "refused %s: %s", qPrintable(socket->peerAddress().toString()),
               why.constData());
        socket->write(protocol::reply::error(why));
        socket->disconnectFromHost();
        connect(socket, &QSslSocket::disconnected, socket, &QObject::deleteLater);
        // A peer that never reads must not keep the socket forever.
        QTimer::singleShot(5000, socket, &QObject::deleteLater);
    };
    if (m_shuttingDown)
        return refuse("Server shutting down");
    if (cn.isEmpty())
        return refuse("Unauthorized: the client certificate has no Common Name");
    if (tls::isRevoked(certificate, m_revokedSerials))
        return refuse("Unauthorized: the client certificate has been revoked");
    const Roles roles = m_acl.rolesFor(cn);
    if (!roles)
        return refuse("Unauthorized: certificate CN '" + cn.toUtf8() + "' has no role");

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

    auto *session = new Session(socket, identity, limits, *m_dispatcher, this);
    m_sessions.insert(identity.connectionId, session);
    connect(session, &Session::closed, this, &Broker::onSessionClosed);
    connect(session, &Session::writable, this,
            [this](Session *s) { m_router->endpointWritable(s); });
    qCInfo(lcBroker, "connection %llu: %s (%s) from %s", identity.connectionId, qPrintable(cn),
           qPrintable(rolesToString(roles)), qPrintable(identity.address.toString()));
}

void Broker::onSessionClosed(Session *session)
{
    qCInfo(lcBroker, "connection %llu closed (%s)", session->identity().connectionId,
           qPrintable(session->identity().cn));
    m_sessions.remove(session->identity().connectionId);
    m_router->endpointClosed(session);
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
    qCInfo(lcBroker, "shutting down: notifying %lld connections", qlonglong(m_sessions.size()));
    if (m_sessions.isEmpty()) {
        QMetaObject::invokeMethod(this, &Broker::finishShutdown, Qt::QueuedConnection);
        return;
    }
    for (Session *session : std::as_const(m_sessions))
        session->beginShutdown();
    QTimer::singleShot(kShutdownGraceMs, this, &Broker::finishShutdown);
}

} // namespace cmq
