#pragma once
// Latency samples in microseconds, kept as a log-linear histogram (about 1% resolution) so a
// long run costs a few KB and percentiles stay exact enough.

#include <vector>

#include <QtGlobal>

namespace cmq::bench {

class LatencyHistogram
{
public:
    LatencyHistogram();
    void record(qint64 micros);
    void merge(const LatencyHistogram &other);
    qint64 count() const { return m_count; }
    double percentileMs(double p) const; // p in [0, 100]

private:
    static int bucketOf(qint64 micros);
    static qint64 bucketValue(int bucket);
    std::vector<qint64> m_buckets;
    qint64 m_count = 0;
};

} // namespace cmq::bench
