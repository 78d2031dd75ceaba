#pragma once
// The caps every TLS listener puts on connections still in their handshake (slowloris): so many
// at once overall and from one source address. Shared by the data listener (its own TLS, see
// tlsstream.h) and the Qt-based one of the admin and metrics listeners (tlslistener.h).

#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QSslError>
#include <QString>

namespace cmq {

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

private:
    Limits m_limits;
    int m_inHandshake = 0;
    QHash<QString, int> m_inHandshakeByIp;
};

// Holds one handshake's place in the gate for as long as it lives. A child of the connection,
// so a connection that is destroyed for whatever reason (error, timeout, peer gone) gives its
// place back exactly once; a completed handshake deletes it early. Nothing else touches the
// counts.
class HandshakeSlot final : public QObject
{
public:
    HandshakeSlot(HandshakeGate *gate, QString ipKey, QObject *connection)
        : QObject(connection), m_gate(gate), m_ipKey(std::move(ipKey))
    {
    }
    ~HandshakeSlot() override
    {
        // Null while the listener itself is being destroyed (with its connections).
        if (m_gate)
            m_gate->leave(m_ipKey);
    }
    bool failed = false;
    QList<QSslError> sslErrors; // what Qt reported during the handshake (tlslistener.cpp)

private:
    QPointer<HandshakeGate> m_gate;
    QString m_ipKey;
};

} // namespace cmq
