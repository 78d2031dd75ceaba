#include "net/handshakegate.h"

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

} // namespace cmq
