#pragma once
// A monotonic clock in nanoseconds behind an interface, so time-based logic (token buckets,
// idle expiry) can be tested with a clock the test moves by hand.

#include <QElapsedTimer>
#include <QtGlobal>

namespace cmq::limits {

class Clock
{
public:
    virtual ~Clock() = default;
    virtual qint64 nowNs() const = 0;
};

class SteadyClock final : public Clock
{
public:
    SteadyClock() { m_timer.start(); }
    qint64 nowNs() const override { return m_timer.nsecsElapsed(); }

private:
    QElapsedTimer m_timer;
};

// Moves only when told to: for tests.
class ManualClock final : public Clock
{
public:
    qint64 nowNs() const override { return m_now; }
    void advanceMs(qint64 ms) { m_now += ms * 1000000; }
    void advanceNs(qint64 ns) { m_now += ns; }

private:
    qint64 m_now = 1000000000; // not zero, so "never" (0) stays distinguishable
};

} // namespace cmq::limits
