#include "admin/adminserver.h"

#include <QPointer>
#include <QSslSocket>
#include <QTimer>

#include "admin/adminlog.h"
#include "admin/admincommands.h"
#include "admin/adminsession.h"
#include "metrics/brokermetrics.h"
#include "tls/tlsidentity.h"

namespace cmq {

constexpr auto kListener = "admin";

AdminServer::AdminServer(AdminContext context, QObject *parent)
    : QObject(parent), m_context(std::move(context)),
      m_commands(std::make_unique<AdminCommands>(m_context, *this))
{
}

AdminServer::~AdminServer()
{
    m_listener.close();
    for (AdminSession *session : std::as_const(m_sessions)) {
        session->disconnect(this);
        delete session;
    }
}

Status AdminServer::start(const QSslConfiguration &tls, const HostPort &address)
{
    m_listener.setSslConfiguration(tls);
    const Config::Server &server = m_context.config.server;
    // Operators reach this listener while the data listener is under attack: its own caps.
    m_listener.setLimits(TlsListener::Limits{server.handshakeTimeoutMs, 32, 16});
    connect(&m_listener, &TlsListener::ready, this, &AdminServer::admit);
    connect(&m_listener, &TlsListener::handshakeFailed, this,
            [this](const QHostAddress &, const QString &reason, const QString &) {
                m_context.metrics.handshakeFailed(QString::fromLatin1(kListener), reason);
            });
    connect(&m_listener, &TlsListener::handshakeRefused, this,
            [this](const QHostAddress &, const QString &reason) {
                m_context.metrics.connectionRefused(QString::fromLatin1(kListener), reason);
            });
    if (!m_listener.listen(address.host, address.port)) {
        return failure(QStringLiteral("cannot listen on %1 (admin): %2")
                           .arg(address.text, m_listener.errorString()));
    }
    qCInfo(lcAdmin, "admin listener on %s:%u", qPrintable(address.host.toString()),
           unsigned(m_listener.serverPort()));
    return success();
}

Status AdminServer::authorize(const QString &cn) const
{
    if (cn.isEmpty())
        return failure(QStringLiteral("Unauthorized: the client certificate has no Common Name"));
    if (!(m_context.acl.rolesFor(cn) & Role::Admin))
        return failure(
            QStringLiteral("Unauthorized: certificate CN '%1' does not have the Admin role")
                .arg(cn));
    const QStringList &allowed = m_context.config.admin.allowedCns;
    if (!allowed.isEmpty() && !allowed.contains(cn))
        return failure(
            QStringLiteral("Unauthorized: certificate CN '%1' is not in admin.allowed_cns")
                .arg(cn));
    return success();
}

void AdminServer::admit(QSslSocket *socket)
{
    socket->setParent(this);
    const QSslCertificate certificate = socket->peerCertificate();
    const QString cn = tls::commonName(certificate);
    const auto refuse = [this, socket](const char *reason, const QString &why) {
        qCInfo(lcAdmin, "refused admin connection from %s: %s",
               qPrintable(socket->peerAddress().toString()), qPrintable(why));
        m_context.metrics.connectionRefused(QString::fromLatin1(kListener),
                                            QString::fromLatin1(reason));
        socket->write("Error: " + why.toUtf8() + '\n');
        socket->disconnectFromHost();
        connect(socket, &QSslSocket::disconnected, socket, &QObject::deleteLater);
        QTimer::singleShot(5000, socket, &QObject::deleteLater);
    };
    if (m_shuttingDown)
        return refuse("shutting_down", QStringLiteral("Server shutting down"));
    if (const auto refused = tls::identityRefusal(certificate, m_context.revokedSerials))
        return refuse(qPrintable(refused->reason), refused->text);
    if (const Status allowed = authorize(cn); !allowed) {
        const bool isAdmin = bool(m_context.acl.rolesFor(cn) & Role::Admin);
        return refuse(isAdmin ? "not_allowed" : "not_admin", allowed.error());
    }
    if (m_sessions.size() >= MaxConnections)
        return refuse("max_connections",
                      QStringLiteral("Server busy: too many admin connections (limit %1)")
                          .arg(MaxConnections));

    ClientIdentity identity;
    identity.connectionId = m_context.nextConnectionId();
    identity.cn = cn;
    identity.roles = m_context.acl.rolesFor(cn);
    identity.address = socket->peerAddress();
    identity.port = socket->peerPort();
    identity.certificate = certificate;
    identity.connectedAt = QDateTime::currentDateTimeUtc();

    auto *session = new AdminSession(socket, identity, this);
    m_sessions.insert(identity.connectionId, session);
    m_context.metrics.connectionOpened(QString::fromLatin1(kListener));
    connect(session, &AdminSession::requestReceived, this,
            [this](AdminSession *s, const admin::AdminRequest &request) {
                m_commands->execute(*s, request);
            });
    connect(session, &AdminSession::watchDue, this,
            [this](AdminSession *s) { m_commands->watchDue(*s); });
    connect(session, &AdminSession::closed, this, [this](AdminSession *s) {
        m_sessions.remove(s->identity().connectionId);
        const AdminCounters &c = s->counters();
        m_context.metrics.connectionClosed(
            metrics::ConnectionSample{QString::fromLatin1(kListener), s->identity().roles,
                                      c.bytesIn, c.bytesOut, 0, false, {}}); // admins: no talker
    });
    qCInfo(lcAdmin, "admin connection %llu: %s from %s", identity.connectionId, qPrintable(cn),
           qPrintable(identity.address.toString()));
}

int AdminServer::recheckSessions()
{
    int closed = 0;
    for (AdminSession *session : std::as_const(m_sessions)) {
        if (authorize(session->identity().cn) &&
            !tls::isRevoked(session->identity().certificate, m_context.revokedSerials))
            continue;
        ++closed;
        // Queued: the reload's requester gets its reply before a notice closes it.
        QPointer<AdminSession> guard(session);
        QMetaObject::invokeMethod(
            session,
            [guard] {
                if (guard)
                    guard->closeWithNotice("Access revoked by a configuration reload");
            },
            Qt::QueuedConnection);
    }
    return closed;
}

void AdminServer::shutdown()
{
    m_shuttingDown = true;
    m_listener.close();
    for (AdminSession *session : std::as_const(m_sessions))
        session->closeWithNotice("Server shutting down");
}

} // namespace cmq
