#pragma once
// The last few minutes of broker-wide rates and depth, one sample per snapshot, for the
// Overview charts. Bounded so a console left open for days does not grow.

#include <QJsonObject>
#include <QList>

namespace cmq::admingui {

struct RateSample
{
    double seconds = 0; // broker uptime at the sample
    double published = 0;
    double delivered = 0;
    double acknowledged = 0;
    double depth = 0; // ready + unacked
};

class RateHistory
{
public:
    explicit RateHistory(int capacity = 300) : m_capacity(capacity) {}

    void add(const RateSample &sample);
    // Takes rates and totals from a snapshot object.
    void addSnapshot(const QJsonObject &snapshot);
    void clear() { m_samples.clear(); }

    const QList<RateSample> &samples() const { return m_samples; }
    int capacity() const { return m_capacity; }
    double maxRate() const;
    double maxDepth() const;

private:
    QList<RateSample> m_samples;
    int m_capacity;
};

} // namespace cmq::admingui
