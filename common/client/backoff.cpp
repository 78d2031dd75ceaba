#include "client/backoff.h"

#include <algorithm>

namespace cmq::client {

Backoff::Backoff(int initialMs, int maxMs)
    : m_initialMs(std::max(1, initialMs)), m_maxMs(std::max(m_initialMs, maxMs)),
      m_random(QRandomGenerator::securelySeeded())
{
}

int Backoff::nextDelayMs()
{
    // Doubling stops at the maximum, so the shift never overflows however long it fails.
    qint64 delay = m_initialMs;
    for (int i = 0; i < m_failures && delay < m_maxMs; ++i)
        delay *= 2;
    delay = std::min<qint64>(delay, m_maxMs);
    ++m_failures;
    const qint64 half = delay / 2;
    return int(half + qint64(m_random.bounded(quint32(delay - half + 1))));
}

} // namespace cmq::client
