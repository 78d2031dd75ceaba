#pragma once
// Exponential backoff with jitter for reconnecting: the pause doubles after every failed round
// up to a maximum, and each pause is drawn from its upper half so that many clients cut off by
// the same broker restart do not come back in lockstep.

#include <QRandomGenerator>

namespace cmq::client {

class Backoff
{
public:
    Backoff(int initialMs, int maxMs);

    // The pause before the next attempt, in [d/2, d] for d = min(max, initial × 2^failures).
    int nextDelayMs();
    void reset() { m_failures = 0; }
    int failures() const { return m_failures; }
    // For tests: a seeded generator makes the jitter reproducible.
    void setGenerator(QRandomGenerator generator) { m_random = generator; }

private:
    int m_initialMs;
    int m_maxMs;
    int m_failures = 0;
    QRandomGenerator m_random;
};

} // namespace cmq::client
