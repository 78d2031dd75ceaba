#include "net/handshakegate.h"

#include <QTimer>

#include "limits/ratelimiter.h"
#include "net/netlog.h"

namespace cmq {

HandshakeGate::Refusal HandshakeGate::enter(const QString &ipKey)
{
    if (m_inHandshake >= m_limits.maxHandshakes)
        return Refusal::AllPeers;
    int &fromPeer = m_inHandshakeByIp[ipKey];
    if (fromPeer >= m_limits.maxHandshakesPerIp)
        return Refusal::ThisPeer;
    ++fromPeer;
    ++m_inHandshake;
    return Refusal::None;
}

void HandshakeGate::leave(const QString &ipKey)
{
    --m_inHandshake;
    auto it = m_inHandshakeByIp.find(ipKey);
    if (it != m_inHandshakeByIp.end() && --*it <= 0)
        m_inHandshakeByIp.erase(it);
}

QString HandshakeGate::refusalReason(Refusal refusal)
{
    return refusal == Refusal::AllPeers ? QStringLiteral("handshake_limit")
                                        : QStringLiteral("handshake_limit_ip");
}

HandshakeSlot *HandshakeGate::admit(QObject *connection, const QHostAddress &peer, quint16 port,
                                    std::function<void()> abort)
{
    const QString ipKey = limits::RateLimiter::ipKey(peer);
    const Refusal refusal = enter(ipKey);
    if (refusal != Refusal::None) {
        // Its retry will find a slot once the slow handshakes time out.
        qCInfo(lcListener, "closed %s at once: %d handshakes in progress (%d from it)",
               qPrintable(ipKey), inProgress(), inProgressFrom(ipKey));
        abort();
        connection->deleteLater();
        Q_EMIT refused(peer, refusalReason(refusal));
        return nullptr;
    }
    auto *slot = new HandshakeSlot(this, ipKey, connection, peer, port, std::move(abort));
    qCDebug(lcListener, "connection from %s:%u: TLS handshake started (%d in progress)",
            qPrintable(ipKey), unsigned(port), inProgress());

    auto *deadline = new QTimer(slot);
    deadline->setSingleShot(true);
    connect(deadline, &QTimer::timeout, slot, [this, slot] {
        slot->fail(QStringLiteral("timeout"),
                   QStringLiteral("no TLS handshake within %1 ms").arg(m_limits.handshakeTimeoutMs));
    });
    deadline->start(m_limits.handshakeTimeoutMs);
    return slot;
}

HandshakeSlot::HandshakeSlot(HandshakeGate *gate, QString ipKey, QObject *connection,
                             QHostAddress peer, quint16 port, std::function<void()> abort)
    : QObject(connection), m_gate(gate), m_ipKey(std::move(ipKey)), m_peer(std::move(peer)),
      m_port(port), m_abort(std::move(abort))
{
}

HandshakeSlot::~HandshakeSlot()
{
    // Null while the listener itself is being destroyed (with its connections).
    if (m_gate)
        m_gate->leave(m_ipKey);
}

void HandshakeSlot::done(const QString &protocol, const QString &cipher)
{
    qCDebug(lcListener, "TLS handshake with %s:%u done: %s, %s", qPrintable(m_ipKey),
            unsigned(m_port), qPrintable(protocol), qPrintable(cipher));
    delete this;
}

void HandshakeSlot::fail(const QString &reason, const QString &detail)
{
    if (m_failed || !m_gate)
        return; // reported already, or the listener is going away with its connections
    m_failed = true;
    qCInfo(lcListener, "handshake from %s failed (%s): %s", qPrintable(m_ipKey),
           qPrintable(reason), qPrintable(detail));
    Q_EMIT m_gate->failed(m_peer, reason, detail);
    m_abort();
    parent()->deleteLater();
}

} // namespace cmq
