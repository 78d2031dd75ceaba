#include "models/ratehistory.h"

#include <algorithm>

namespace cmq::admingui {

void RateHistory::add(const RateSample &sample)
{
    // Uptime going backwards means the broker restarted: the old curve would mislead.
    if (!m_samples.isEmpty() && sample.seconds < m_samples.last().seconds)
        m_samples.clear();
    m_samples.append(sample);
    if (m_samples.size() > m_capacity)
        m_samples.remove(0, m_samples.size() - m_capacity);
}

void RateHistory::addSnapshot(const QJsonObject &snapshot)
{
    const QJsonObject rates = snapshot.value("rates").toObject();
    const QJsonObject totals = snapshot.value("totals").toObject();
    add({snapshot.value("broker").toObject().value("uptime_seconds").toDouble(),
         rates.value("messages_published").toDouble(), rates.value("messages_delivered").toDouble(),
         rates.value("messages_acknowledged").toDouble(),
         totals.value("messages_ready").toDouble() + totals.value("messages_unacked").toDouble()});
}

double RateHistory::maxRate() const
{
    double max = 0;
    for (const RateSample &s : m_samples)
        max = std::max({max, s.published, s.delivered, s.acknowledged});
    return max;
}

double RateHistory::maxDepth() const
{
    double max = 0;
    for (const RateSample &s : m_samples)
        max = std::max(max, s.depth);
    return max;
}

} // namespace cmq::admingui
