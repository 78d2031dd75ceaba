#pragma once
// The broker-wide memory budget (performance.memory_budget_mb), like RabbitMQ's memory alarm:
// what the broker holds for messages (envelopes queued, delivered and awaiting an ack, or
// waiting for their commit) plus what it holds for connections (output the network has not
// taken, deliveries held behind a pending reply). A publish that would take that over the
// budget is refused; when the broker is also above 90% of it, the alarm goes on and every
// publish is refused, whatever its size, until use falls back to 90% (so that a broker
// hovering at the limit does not switch publishers on and off with every message). Acks,
// consumes and deliveries go on, so consumers drain it. Below 90% a refused publish is just
// one that does not fit (a large message), and raises no alarm.
// Pure arithmetic: the router reports message bytes, the broker samples connection bytes.

#include <functional>

#include <QString>

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
    enum class Admission { Admitted, Alarm, DoesNotFit };
    // Whether a publish that brings `bytes` more may be accepted; a refusal counts, and raises
    // the alarm when use is above 90% of the budget.
    Admission admit(qint64 bytes);
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

// "0.9", "63.7", "9830": MiB for messages, with a decimal while small budgets would show 0.
QString mebibytes(qint64 bytes);

// performance.memory_budget_mb = 0 (the default): 40% of this machine's memory, or of the
// service's cgroup limit (systemd MemoryMax=) when that is lower. 0 if neither is known.
qint64 automaticMemoryBudget();

} // namespace cmq::limits
