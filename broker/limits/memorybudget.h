#pragma once
// The broker-wide memory budget (performance.memory_budget_mb), like RabbitMQ's memory alarm:
// what the broker holds for messages (envelopes queued, delivered and awaiting an ack, or
// waiting for their commit) plus what it holds for connections (output the network has not
// taken, deliveries held behind a pending reply). Once accepting a publish would take that
// over the budget the alarm goes on and publishes are refused with an error; acks, consumes
// and deliveries go on, so consumers drain it. It goes off at 90% of the budget, so that a
// queue hovering at the limit does not switch publishers on and off with every message.
// Pure arithmetic: the router reports message bytes, the broker samples connection bytes.

#include <functional>

#include <QtGlobal>

namespace cmq::limits {

class MemoryBudget
{
public:
    // 0 = no budget: never alarms.
    explicit MemoryBudget(qint64 budgetBytes = 0) : m_budget(budgetBytes) {}

    void setBudget(qint64 bytes);
    qint64 budget() const { return m_budget; }

    void addMessageBytes(qint64 delta);
    void setConnectionBytes(qint64 bytes);
    qint64 messageBytes() const { return m_messageBytes; }
    qint64 connectionBytes() const { return m_connectionBytes; }
    qint64 used() const { return m_messageBytes + m_connectionBytes; }

    bool alarm() const { return m_alarm; }
    // Whether a publish that brings `bytes` more may be accepted. A refusal raises the alarm
    // (if it was off) and counts.
    bool admit(qint64 bytes);
    quint64 refusals() const { return m_refusals; }
    quint64 alarmsRaised() const { return m_alarmsRaised; }

    // Called with the new state whenever the alarm goes on or off (the broker logs it).
    std::function<void(bool on)> onAlarmChanged;

private:
    void setAlarm(bool on);
    void clearIfBelowThreshold();

    qint64 m_budget;
    qint64 m_messageBytes = 0;
    qint64 m_connectionBytes = 0;
    bool m_alarm = false;
    quint64 m_refusals = 0;
    quint64 m_alarmsRaised = 0;
};

// performance.memory_budget_mb = 0 (the default): 40% of this machine's memory, or of the
// service's cgroup limit (systemd MemoryMax=) when that is lower. 0 if neither is known.
qint64 automaticMemoryBudget();

} // namespace cmq::limits
