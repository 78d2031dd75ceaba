#pragma once
// Presence (docs/PROTOCOL.md, "Presence"): which identities are connected, told to the
// subscribers allowed to see them. Identities in one of acl.presence_groups see each other;
// nobody else sees anything. An identity is online from its first connection; it goes offline
// once its last connection has closed and it has not come back within the debounce time, so a
// client that reconnects at once is not reported as leaving. A subscriber whose output is backed
// up is not sent more: the latest state of each identity waits for it (one entry per identity,
// never a growing log) and goes out when it can take output again.

#include <functional>

#include <QHash>
#include <QList>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <QTimer>

namespace cmq {

class Endpoint;

class Presence final : public QObject
{
    Q_OBJECT

public:
    using Clock = std::function<qint64()>; // milliseconds, monotonic

    Presence(const QList<QStringList> &groups, int debounceMs, QObject *parent = nullptr);

    // Reload: who sees whom and the debounce from now on.
    void configure(const QList<QStringList> &groups, int debounceMs);
    // For tests: time and expiry driven by hand (expireDue()) instead of a timer.
    void setClock(Clock clock);

    // A connection of `cn` was established or has closed.
    void connected(const QString &cn);
    void disconnected(const QString &cn);

    // True when `cn` is in a presence group.
    bool mayUse(const QString &cn) const;
    // Starts telling `subscriber`; returns the identities it may see that are online now, sorted
    // (what it is told first). Subscribing again changes nothing but returns them again.
    QStringList subscribe(Endpoint &subscriber);
    void unsubscribe(const Endpoint &subscriber);
    // Sends what waited for a subscriber whose output was backed up.
    void endpointWritable(Endpoint &subscriber);

    // Identities whose last connection closed more than the debounce time ago go offline.
    void expireDue();

    bool isOnline(const QString &cn) const { return m_online.contains(cn); }
    qsizetype subscriberCount() const { return m_subscribers.size(); }

private:
    struct Subscriber
    {
        Endpoint *endpoint = nullptr;
        QHash<QString, bool> told;    // what it was last told of each identity
        QHash<QString, bool> waiting; // latest state not yet sent (output backed up)
    };

    void announce(const QString &cn, bool online);
    void tell(Subscriber &subscriber, const QString &cn, bool online);
    void flush(Subscriber &subscriber);
    void armTimer();
    bool sees(const QString &subscriberCn, const QString &cn) const;

    QHash<QString, QSet<QString>> m_peers; // cn → who it may see
    int m_debounceMs = 0;
    Clock m_clock;
    bool m_manualExpiry = false;
    QTimer m_timer;
    QHash<QString, int> m_connections;        // cn → open connections
    QSet<QString> m_online;                   // announced online
    QHash<QString, qint64> m_leaving;         // cn → when it goes offline unless it comes back
    QHash<quint64, Subscriber> m_subscribers; // by endpoint id
};

} // namespace cmq
