#include "core/presence.h"

#include <algorithm>

#include <QDeadlineTimer>

#include "core/endpoint.h"
#include "protocol/replies.h"

namespace cmq {

Presence::Presence(const QList<QStringList> &groups, int debounceMs, QObject *parent)
    : QObject(parent), m_clock([] { return QDeadlineTimer::current().deadline(); })
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &Presence::expireDue);
    configure(groups, debounceMs);
}

void Presence::configure(const QList<QStringList> &groups, int debounceMs)
{
    m_peers.clear();
    for (const QStringList &group : groups) {
        for (const QString &member : group) {
            QSet<QString> &peers = m_peers[member];
            for (const QString &other : group) {
                if (other != member)
                    peers.insert(other);
            }
        }
    }
    m_debounceMs = qMax(0, debounceMs);
    // Who may see whom changed: a subscriber that left every group is no longer told anything.
    for (auto it = m_subscribers.begin(); it != m_subscribers.end();) {
        if (!mayUse(it->endpoint->clientId()))
            it = m_subscribers.erase(it);
        else
            ++it;
    }
}

void Presence::setClock(Clock clock)
{
    m_clock = std::move(clock);
    m_manualExpiry = true;
    m_timer.stop();
}

bool Presence::mayUse(const QString &cn) const
{
    return m_peers.contains(cn);
}

bool Presence::sees(const QString &subscriberCn, const QString &cn) const
{
    const auto peers = m_peers.constFind(subscriberCn);
    return peers != m_peers.cend() && peers->contains(cn);
}

void Presence::connected(const QString &cn)
{
    if (++m_connections[cn] > 1)
        return;
    // Back within the debounce time: its leaving was never told, so its return is not either.
    if (m_leaving.remove(cn))
        return;
    m_online.insert(cn);
    announce(cn, true);
}

void Presence::disconnected(const QString &cn)
{
    const auto count = m_connections.find(cn);
    if (count == m_connections.end())
        return;
    if (--count.value() > 0)
        return;
    m_connections.erase(count);
    if (!m_online.contains(cn))
        return;
    m_leaving.insert(cn, m_clock() + m_debounceMs);
    if (m_debounceMs == 0)
        return expireDue();
    armTimer();
}

void Presence::expireDue()
{
    const qint64 now = m_clock();
    QStringList gone;
    for (auto it = m_leaving.begin(); it != m_leaving.end();) {
        if (it.value() <= now) {
            gone << it.key();
            it = m_leaving.erase(it);
        } else {
            ++it;
        }
    }
    std::sort(gone.begin(), gone.end());
    for (const QString &cn : std::as_const(gone)) {
        m_online.remove(cn);
        announce(cn, false);
    }
    armTimer();
}

void Presence::armTimer()
{
    if (m_manualExpiry || m_leaving.isEmpty())
        return m_timer.stop();
    const qint64 next = *std::min_element(m_leaving.cbegin(), m_leaving.cend());
    m_timer.start(int(qBound<qint64>(0, next - m_clock(), qint64(m_debounceMs))));
}

QStringList Presence::subscribe(Endpoint &subscriber)
{
    Subscriber &entry = m_subscribers[subscriber.endpointId()];
    entry.endpoint = &subscriber;
    entry.waiting.clear();
    entry.told.clear();
    QStringList online;
    for (const QString &cn : std::as_const(m_online)) {
        if (sees(subscriber.clientId(), cn)) {
            online << cn;
            entry.told.insert(cn, true);
        }
    }
    std::sort(online.begin(), online.end());
    return online;
}

void Presence::unsubscribe(const Endpoint &subscriber)
{
    m_subscribers.remove(subscriber.endpointId());
}

void Presence::announce(const QString &cn, bool online)
{
    // By id, not by reference into the hash: a push that ends a subscriber's connection
    // unsubscribes it, which must not pull the hash out from under this walk.
    const QList<quint64> ids = m_subscribers.keys();
    for (const quint64 id : ids) {
        const auto it = m_subscribers.find(id);
        if (it != m_subscribers.end() && sees(it->endpoint->clientId(), cn))
            tell(*it, cn, online);
    }
}

void Presence::tell(Subscriber &subscriber, const QString &cn, bool online)
{
    if (!subscriber.waiting.isEmpty() || !subscriber.endpoint->canTakeDeliveries()) {
        subscriber.waiting.insert(cn, online);
        return;
    }
    if (subscriber.told.value(cn, false) == online)
        return;
    subscriber.told.insert(cn, online);
    subscriber.endpoint->pushEvent(protocol::reply::presence(cn.toUtf8(), online));
}

void Presence::endpointWritable(Endpoint &endpoint)
{
    const auto it = m_subscribers.find(endpoint.endpointId());
    if (it != m_subscribers.end())
        flush(*it);
}

void Presence::flush(Subscriber &subscriber)
{
    QStringList names = subscriber.waiting.keys();
    std::sort(names.begin(), names.end());
    const QHash<QString, bool> waiting = std::exchange(subscriber.waiting, {});
    for (const QString &cn : std::as_const(names)) {
        if (!subscriber.endpoint->canTakeDeliveries()) {
            subscriber.waiting.insert(cn, waiting.value(cn)); // the rest waits again
            continue;
        }
        tell(subscriber, cn, waiting.value(cn));
    }
}

} // namespace cmq
