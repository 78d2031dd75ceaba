#pragma once
// The recent depth (ready and unacked) and lag of every queue, one sample per snapshot, so a
// queue's detail view opens with a chart that already has its last minutes. Stored compactly and
// bounded per queue; queues that vanish from the snapshot are forgotten.

#include <QHash>
#include <QJsonArray>
#include <QList>
#include <QString>

namespace cmq::admingui {

struct DepthSample
{
    double seconds = 0; // broker uptime at the sample
    qint64 ready = 0;
    qint64 unacked = 0;
    qint64 lagMs = 0; // oldest_ready_age_ms: how long the next message had waited
};

class QueueDepthHistory
{
public:
    explicit QueueDepthHistory(int capacity = 300) : m_capacity(capacity) {}

    // `seconds`: the snapshot's broker uptime. Going backwards means the broker restarted.
    void addSnapshot(const QJsonArray &queues, double seconds);
    QList<DepthSample> samples(const QString &queue) const;
    // The newest `count` samples (fewer when it has fewer), oldest first: what a sparkline
    // draws, without copying the whole ring.
    QList<DepthSample> recent(const QString &queue, int count) const;
    int sampleCount(const QString &queue) const;
    // `back` samples before the newest (0: the newest); `back` < sampleCount(queue).
    DepthSample sampleAgo(const QString &queue, int back) const;
    int capacity() const { return m_capacity; }
    int queueCount() const { return int(m_queues.size()); }
    void clear() { m_queues.clear(); }

private:
    // A ring of at most m_capacity samples; `next` is where the oldest one sits once full.
    struct Ring
    {
        QList<DepthSample> samples;
        int next = 0;
        quint64 generation = 0; // the snapshot that last saw this queue
    };
    QHash<QString, Ring> m_queues;
    int m_capacity;
    quint64 m_generation = 0;
    double m_lastSeconds = -1;
};

} // namespace cmq::admingui
