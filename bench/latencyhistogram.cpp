#include "latencyhistogram.h"

#include <algorithm>
#include <cmath>

namespace cmq::bench {

// 128 sub-buckets per power of two: under 1% error, up to ~2^40 µs.
constexpr int kSubBits = 7;
constexpr int kSub = 1 << kSubBits;
constexpr int kBuckets = 41 * kSub;

LatencyHistogram::LatencyHistogram() : m_buckets(kBuckets, 0) {}

int LatencyHistogram::bucketOf(qint64 micros)
{
    const quint64 v = quint64(std::max<qint64>(micros, 0));
    if (v < quint64(kSub))
        return int(v);
    const int exponent = 63 - __builtin_clzll(v); // >= kSubBits
    const int shift = exponent - kSubBits;
    const int sub = int((v >> shift) & (kSub - 1));
    return std::min(kBuckets - 1, (shift + 1) * kSub + sub);
}

qint64 LatencyHistogram::bucketValue(int bucket)
{
    if (bucket < kSub)
        return bucket;
    const int shift = bucket / kSub - 1;
    const int sub = bucket % kSub;
    return (qint64(kSub + sub) << shift);
}

void LatencyHistogram::record(qint64 micros)
{
    ++m_buckets[size_t(bucketOf(micros))];
    ++m_count;
}

void LatencyHistogram::merge(const LatencyHistogram &other)
{
    for (size_t i = 0; i < m_buckets.size(); ++i)
        m_buckets[i] += other.m_buckets[i];
    m_count += other.m_count;
}

double LatencyHistogram::percentileMs(double p) const
{
    if (m_count == 0)
        return 0;
    const qint64 rank = std::max<qint64>(1, qint64(std::ceil(p / 100.0 * double(m_count))));
    qint64 seen = 0;
    for (size_t i = 0; i < m_buckets.size(); ++i) {
        seen += m_buckets[i];
        if (seen >= rank)
            return double(bucketValue(int(i))) / 1000.0;
    }
    return double(bucketValue(kBuckets - 1)) / 1000.0;
}

} // namespace cmq::bench
