#pragma once
// The daemon as one object: storage recovery, the router, the mTLS listener and the
// sessions it accepts. main() only parses arguments and runs it.

#include <functional>
#include <memory>

#include <QHash>
#include <QObject>
#include <QSslServer>

#include "acl/aclmanager.h"
#include "config/config.h"
#include "util/result.h"

namespace cmq {

class Dispatcher;
class Router;
class Session;
struct Services;
namespace storage {
class Storage;
}

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
    qsizetype sessionCount() const { return m_sessions.size(); }

private:
    void onClientReady();
    void admit(QSslSocket *socket);
    void onSessionClosed(Session *session);
    void finishShutdown();

    Config m_config;
    AclManager m_acl;
    std::unique_ptr<Router> m_router;
    std::unique_ptr<storage::Storage> m_storage; // declared after the router: destroyed first
    std::unique_ptr<Services> m_services;
    std::unique_ptr<Dispatcher> m_dispatcher;
    QSslServer m_listener;
    QList<QByteArray> m_revokedSerials; // from tls.crl_path
    QHash<quint64, Session *> m_sessions;
    quint64 m_nextConnectionId = 1;
    bool m_shuttingDown = false;
    std::function<void()> m_shutdownDone;
};

} // namespace cmq
