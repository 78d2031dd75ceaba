#pragma once
// A mutual-TLS listener over Qt's QSslSocket that protects itself before any identity is known:
// a deadline for the handshake, a cap on connections still in handshake (slowloris) overall and
// per source IP (handshakegate.h), and a reason for every failed handshake (for logs and
// metrics). Used by the admin and the metrics listener, whose connections are few; the data
// listener does TLS itself (datalistener.h). Qt's QSslServer has the timeout, but no caps and no
// failure reasons.
// Accepted sockets get TCP_NODELAY and TCP keepalive (60 s idle, 10 s interval, 6 probes).

#include <QHostAddress>
#include <QList>
#include <QSslConfiguration>
#include <QSslError>
#include <QTcpServer>

#include "net/handshakegate.h"

class QSslSocket;

namespace cmq {

class TlsListener final : public QTcpServer
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TlsListener)

public:
    using Limits = HandshakeGate::Limits;

    explicit TlsListener(QObject *parent = nullptr);
    ~TlsListener() override;

    // Used by handshakes that start from now on (a reload may replace it at any time).
    void setSslConfiguration(const QSslConfiguration &configuration);
    void setLimits(const Limits &limits) { m_gate.setLimits(limits); }
    int handshakesInProgress() const { return m_gate.inProgress(); }

    // The metric label for a failed handshake: "timeout", "no_certificate",
    // "certificate_expired", "certificate_not_yet_valid", "untrusted_certificate",
    // "certificate_error", "protocol_error", "closed_by_peer", "network_error".
    // TCP_NODELAY and keepalive (60 s idle, 10 s interval, 6 probes) on an accepted socket;
    // done for every connection this listener accepts, and by other servers for theirs.
    static void setAcceptedSocketOptions(QAbstractSocket *socket);
    static void setAcceptedSocketOptions(int descriptor);

    static QString failureReason(QAbstractSocket::SocketError error,
                                 const QList<QSslError> &sslErrors, const QString &errorText);

Q_SIGNALS:
    // The handshake completed and the peer's certificate verified against the CA. The socket
    // is a child of the listener until the receiver reparents it.
    void ready(QSslSocket *socket);
    // Emitted once per connection that never became ready.
    void handshakeFailed(const QHostAddress &peer, const QString &reason, const QString &detail);
    // Closed right after accept because too many handshakes were in progress.
    void handshakeRefused(const QHostAddress &peer, const QString &reason);

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    QSslConfiguration m_configuration;
    HandshakeGate m_gate;
};

} // namespace cmq
