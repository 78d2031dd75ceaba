#pragma once
// The data listener: accepts client connections and does their mutual-TLS handshake itself
// (TlsStream, one shared TlsContext), with the same protections as TlsListener before any
// identity is known: a handshake deadline, the handshake caps (handshakegate.h) and a reason
// for every failed handshake. Accepted sockets get TCP_NODELAY and keepalive.

#include <memory>

#include <QHostAddress>
#include <QTcpServer>

#include "net/handshakegate.h"

namespace cmq {

class TlsContext;
class TlsStream;

class DataListener final : public QTcpServer
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DataListener)

public:
    explicit DataListener(QObject *parent = nullptr);
    ~DataListener() override;

    // Used by handshakes that start from now on (a reload may replace it at any time).
    void setContext(std::shared_ptr<const TlsContext> context) { m_context = std::move(context); }
    void setLimits(const HandshakeGate::Limits &limits) { m_gate.setLimits(limits); }
    int handshakesInProgress() const { return m_gate.inProgress(); }

Q_SIGNALS:
    // The handshake completed and the peer's certificate verified against the CA. The stream
    // is a child of the listener until the receiver reparents it.
    void ready(TlsStream *stream);
    // Emitted once per connection that never became ready (reasons as TlsListener's).
    void handshakeFailed(const QHostAddress &peer, const QString &reason, const QString &detail);
    // Closed right after accept because too many handshakes were in progress.
    void handshakeRefused(const QHostAddress &peer, const QString &reason);

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    std::shared_ptr<const TlsContext> m_context;
    HandshakeGate m_gate;
};

} // namespace cmq
