#pragma once
// The admin listener (docs/ADMIN-PROTOCOL.md): a second mutual-TLS listener that admits only
// the Admin role, and only CNs in admin.allowed_cns when that list is set; a refused client
// gets one error line, then the close. Owns the admin sessions and hands their requests to
// AdminCommands.

#include <memory>

#include <QHash>
#include <QObject>
#include <QSslConfiguration>

#include "admin/admincontext.h"
#include "net/tlslistener.h"

class QSslSocket;

namespace cmq {

class AdminCommands;
class AdminSession;

class AdminServer final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AdminServer)

public:
    // Admin connections are few; this many at once is plenty and bounds a misbehaving tool.
    static constexpr int MaxConnections = 64;

    explicit AdminServer(AdminContext context, QObject *parent = nullptr);
    ~AdminServer() override;

    Status start(const QSslConfiguration &tls, const HostPort &address);
    // For handshakes from now on (reload).
    void setSslConfiguration(const QSslConfiguration &tls) { m_listener.setSslConfiguration(tls); }
    quint16 port() const { return m_listener.serverPort(); }
    int handshakesInProgress() const { return m_listener.handshakesInProgress(); }

    QList<AdminSession *> sessions() const { return m_sessions.values(); }
    AdminSession *session(quint64 id) const { return m_sessions.value(id); }

    // After a reload: closes the sessions whose CN is no longer allowed; returns how many.
    int recheckSessions();
    // Stops listening and tells every admin client.
    void shutdown();

    // Whether `cn` may use the admin listener now (also used by /metrics over mTLS).
    Status authorize(const QString &cn) const;

private:
    void admit(QSslSocket *socket);

    AdminContext m_context;
    TlsListener m_listener;
    std::unique_ptr<AdminCommands> m_commands;
    QHash<quint64, AdminSession *> m_sessions;
    bool m_shuttingDown = false;
};

} // namespace cmq
