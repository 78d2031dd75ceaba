#pragma once
// The classic token bucket of the seed (section 9): refilled from the time elapsed since the
// last look at `rate` tokens per second, up to `burst`; a request takes tokens if enough are
// there. Pure arithmetic on a caller-supplied clock reading.

#include <QtGlobal>

namespace cmq::limits {

class TokenBucket
{
public:
    TokenBucket() = default;
    // Starts full.
    TokenBucket(double rate, double burst, qint64 nowNs);

    // New settings; the tokens earned so far are kept, capped at the new burst.
    void configure(double rate, double burst, qint64 nowNs);

    // The content at `nowNs` (may be negative after takeAtLeastOne with a large cost).
    double tokens(qint64 nowNs) const;
    bool isFull(qint64 nowNs) const { return tokens(nowNs) >= m_burst; }
    double rate() const { return m_rate; }
    double burst() const { return m_burst; }

    // Whether `cost` tokens are there now (refills first).
    bool has(qint64 nowNs, double cost);
    // Takes `cost` tokens without checking; call after has(). May leave the bucket negative.
    void take(double cost) { m_tokens -= cost; }
    // Nanoseconds from `nowNs` until the bucket is full again (0 when it is).
    qint64 nsUntilFull(qint64 nowNs) const;

private:
    void refill(qint64 nowNs);

    double m_rate = 1;
    double m_burst = 1;
    double m_tokens = 1;
    qint64 m_lastNs = 0;
};

} // namespace cmq::limits
