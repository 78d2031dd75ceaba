#include "models/queuedepthhistory.h"

#include <algorithm>

#include <QJsonObject>

namespace cmq::admingui {

void QueueDepthHistory::addSnapshot(const QJsonArray &queues, double seconds)
{
    if (seconds < m_lastSeconds)
        m_queues.clear();
    m_lastSeconds = seconds;
    ++m_generation;
    for (const QJsonValue &value : queues) {
        const QJsonObject queue = value.toObject();
        Ring &ring = m_queues[queue.value(u"name").toString()];
        const DepthSample sample{seconds, queue.value(u"ready").toInteger(),
                                 queue.value(u"unacked").toInteger(),
                                 queue.value(u"oldest_ready_age_ms").toInteger()};
        if (ring.samples.size() < m_capacity) {
            ring.samples.append(sample);
        } else {
            ring.samples[ring.next] = sample;
            ring.next = (ring.next + 1) % m_capacity;
        }
        ring.generation = m_generation;
    }
    if (m_queues.size() > queues.size()) {
        m_queues.removeIf([this](const QHash<QString, Ring>::iterator it) {
            return it->generation != m_generation;
        });
    }
}

QList<DepthSample> QueueDepthHistory::samples(const QString &queue) const
{
    const auto it = m_queues.constFind(queue);
    if (it == m_queues.constEnd())
        return {};
    // Oldest first: the part after `next`, then the part before it.
    QList<DepthSample> ordered = it->samples.mid(it->next);
    ordered.append(it->samples.mid(0, it->next));
    return ordered;
}

int QueueDepthHistory::sampleCount(const QString &queue) const
{
    const auto it = m_queues.constFind(queue);
    return it == m_queues.constEnd() ? 0 : int(it->samples.size());
}

DepthSample QueueDepthHistory::sampleAgo(const QString &queue, int back) const
{
    const auto it = m_queues.constFind(queue);
    if (it == m_queues.constEnd() || back < 0 || back >= it->samples.size())
        return {};
    // The newest sample sits just before `next` (at the end while the ring is not full).
    const int size = int(it->samples.size());
    return it->samples.at(((it->next - 1 - back) % size + size) % size);
}

QList<DepthSample> QueueDepthHistory::recent(const QString &queue, int count) const
{
    const int held = std::min(count, sampleCount(queue));
    QList<DepthSample> out;
    out.reserve(held);
    for (int back = held - 1; back >= 0; --back)
        out.append(sampleAgo(queue, back));
    return out;
}

} // namespace cmq::admingui
