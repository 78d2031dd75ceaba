#pragma once
// The caps every TLS listener puts on connections still in their handshake (slowloris): so many
// at once overall and from one source address, a deadline, and one report for every handshake
// refused or failed. Shared by the data listener (its own TLS, see tlsstream.h) and the
// Qt-based one of the admin and metrics listeners (tlslistener.h), which differ only in the
// connection type and in how it reports the handshake's end.

#include <functional>

#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QPointer>
#include <QString>

namespace cmq {

class HandshakeSlot;

class HandshakeGate final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(HandshakeGate)

public:
    struct Limits
    {
        int handshakeTimeoutMs = 10000;
        int maxHandshakes = 256;     // connections in handshake at once, all peers
        int maxHandshakesPerIp = 32; // the same, from one address
    };
    enum class Refusal { None, AllPeers, ThisPeer };

    explicit HandshakeGate(QObject *parent = nullptr) : QObject(parent) {}
    void setLimits(const Limits &limits) { m_limits = limits; }
    const Limits &limits() const { return m_limits; }
    int inProgress() const { return m_inHandshake; }
    int inProgressFrom(const QString &ipKey) const { return m_inHandshakeByIp.value(ipKey); }

    // Counts a handshake from ipKey in, unless a cap is reached.
    Refusal enter(const QString &ipKey);
    void leave(const QString &ipKey);
    // The metric label of a refusal: "handshake_limit" or "handshake_limit_ip".
    static QString refusalReason(Refusal refusal);

    // Takes in the handshake of a connection just accepted (a TlsStream or a QSslSocket). At a
    // cap it is refused: logged, aborted (nothing can be said before TLS is up; the peer sees
    // the close), deleted later, refused() emitted, and null returned. Otherwise the returned
    // slot holds its place, with the deadline running: past it the handshake fails as
    // "timeout". The caller starts the handshake and ends the slot (HandshakeSlot::done or
    // HandshakeSlot::fail).
    template <typename Connection>
    HandshakeSlot *admit(Connection *connection)
    {
        return admit(connection, connection->peerAddress(), connection->peerPort(),
                     [connection] { connection->abort(); });
    }

Q_SIGNALS:
    // The listener's handshakeRefused() and handshakeFailed(), which these are connected to.
    void refused(const QHostAddress &peer, const QString &reason);
    void failed(const QHostAddress &peer, const QString &reason, const QString &detail);

private:
    friend class HandshakeSlot;

    HandshakeSlot *admit(QObject *connection, const QHostAddress &peer, quint16 port,
                         std::function<void()> abort);

    Limits m_limits;
    int m_inHandshake = 0;
    QHash<QString, int> m_inHandshakeByIp;
};

// Holds one handshake's place in the gate for as long as it lives. A child of the connection,
// so a connection that is destroyed for whatever reason (error, timeout, peer gone) gives its
// place back exactly once; a completed handshake deletes it early (done()). Nothing else
// touches the counts.
class HandshakeSlot final : public QObject
{
public:
    HandshakeSlot(HandshakeGate *gate, QString ipKey, QObject *connection, QHostAddress peer,
                  quint16 port, std::function<void()> abort);
    ~HandshakeSlot() override;

    // The handshake completed: logs it, then deletes the slot, its deadline and the
    // connections made with the slot as their context; the count goes down now.
    void done(const QString &protocol, const QString &cipher);
    // Reports the failure once (an error after the timeout, or the reverse, is not reported
    // again): logged, the gate's failed() emitted, then the connection aborted and deleted
    // later, which frees the slot.
    void fail(const QString &reason, const QString &detail);

private:
    QPointer<HandshakeGate> m_gate;
    QString m_ipKey;
    QHostAddress m_peer;
    quint16 m_port;
    std::function<void()> m_abort;
    bool m_failed = false;
};

} // namespace cmq
