#include "models/queuedepthhistory.h"

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
                                 queue.value(u"unacked").toInteger()};
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

} // namespace cmq::admingui
