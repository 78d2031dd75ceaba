#include "metrics/histogram.h"

#include <algorithm>

namespace cmq::metrics {

Histogram::Histogram(QList<double> upperBounds)
    : m_bounds(std::move(upperBounds)), m_buckets(m_bounds.size(), 0)
{
}

void Histogram::observe(double value)
{
    observeMany(value, 1);
}

void Histogram::observeMany(double value, quint64 count)
{
    if (count == 0)
        return;
    // The first bound >= value: "le" is inclusive.
    const auto it = std::lower_bound(m_bounds.cbegin(), m_bounds.cend(), value);
    if (it != m_bounds.cend())
        m_buckets[it - m_bounds.cbegin()] += count;
    m_count += count;
    m_sum += value * double(count);
}

QList<quint64> Histogram::cumulativeCounts() const
{
    QList<quint64> cumulative(m_buckets.size());
    quint64 running = 0;
    for (qsizetype i = 0; i < m_buckets.size(); ++i) {
        running += m_buckets[i];
        cumulative[i] = running;
    }
    return cumulative;
}

QList<double> Histogram::exponentialBounds(double start, double factor, int count)
{
    QList<double> bounds;
    double bound = start;
    for (int i = 0; i < count; ++i, bound *= factor)
        bounds.append(bound);
    return bounds;
}

} // namespace cmq::metrics
