#include "limits/tokenbucket.h"

#include <algorithm>
#include <cmath>

namespace cmq::limits {

// Refill arithmetic in doubles may land a hair below a whole token that should be there
// (0.1 + 0.2 style); this much is forgiven, far below anything a client could exploit.
constexpr double kEpsilon = 1e-9;

TokenBucket::TokenBucket(double rate, double burst, qint64 nowNs)
    : m_rate(rate), m_burst(burst), m_tokens(burst), m_lastNs(nowNs)
{
}

void TokenBucket::configure(double rate, double burst, qint64 nowNs)
{
    refill(nowNs);
    m_rate = rate;
    m_burst = burst;
    m_tokens = std::min(m_tokens, m_burst);
}

double TokenBucket::tokens(qint64 nowNs) const
{
    const qint64 elapsed = std::max<qint64>(0, nowNs - m_lastNs);
    return std::min(m_burst, m_tokens + double(elapsed) * m_rate / 1e9);
}

void TokenBucket::refill(qint64 nowNs)
{
    if (nowNs <= m_lastNs)
        return; // a clock that did not move (or a stale reading) earns nothing
    m_tokens = tokens(nowNs);
    m_lastNs = nowNs;
}

bool TokenBucket::has(qint64 nowNs, double cost)
{
    refill(nowNs);
    return m_tokens + kEpsilon >= cost;
}

qint64 TokenBucket::nsUntilFull(qint64 nowNs) const
{
    const double missing = m_burst - tokens(nowNs);
    if (missing <= 0)
        return 0;
    return qint64(std::ceil(missing / m_rate * 1e9));
}

} // namespace cmq::limits
