#include "limits/memorybudget.h"

#include <QFile>

namespace cmq::limits {

// Off below this share of the budget (see the header).
constexpr qint64 kClearPercent = 90;
// As RabbitMQ's default vm_memory_high_watermark: room for the heap's own overhead, TLS
// buffers and the copies a delivery line makes, which the budget does not count.
constexpr qint64 kAutomaticPercent = 40;

void MemoryBudget::setBudget(qint64 bytes)
{
    m_budget = bytes;
    clearIfBelowThreshold();
}

void MemoryBudget::addMessageBytes(qint64 delta)
{
    m_messageBytes += delta;
    if (delta < 0)
        clearIfBelowThreshold();
}

void MemoryBudget::setConnectionBytes(qint64 bytes)
{
    m_connectionBytes = bytes;
    clearIfBelowThreshold();
}

MemoryBudget::Admission MemoryBudget::admit(qint64 bytes)
{
    if (m_budget <= 0)
        return Admission::Admitted;
    if (!m_alarm && used() + bytes <= m_budget)
        return Admission::Admitted;
    ++m_refusals;
    if (used() * 100 > m_budget * kClearPercent)
        setAlarm(true);
    return m_alarm ? Admission::Alarm : Admission::DoesNotFit;
}

void MemoryBudget::clearIfBelowThreshold()
{
    if (m_alarm && (m_budget <= 0 || used() * 100 <= m_budget * kClearPercent))
        setAlarm(false);
}

void MemoryBudget::setAlarm(bool on)
{
    if (m_alarm == on)
        return;
    m_alarm = on;
    if (on)
        ++m_alarmsRaised;
    if (onAlarmChanged)
        onAlarmChanged(on);
}

QString mebibytes(qint64 bytes)
{
    const double mib = double(bytes) / double(1 << 20);
    return QString::number(mib, 'f', mib < 10 ? 1 : 0);
}

static qint64 readFirstNumber(const QString &path, const QByteArray &prefix)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : file.readAll().split('\n')) {
        if (!line.startsWith(prefix))
            continue;
        bool ok = false;
        const qint64 n = line.mid(prefix.size()).trimmed().split(' ').value(0).toLongLong(&ok);
        return ok ? n : 0;
    }
    return 0;
}

// The memory limit of this process's cgroup, 0 when unlimited or unknown. cgroup v2 writes
// "max" for unlimited (no number is read); v1 a huge number, which loses to MemTotal.
static qint64 cgroupMemoryLimit()
{
    QFile membership(QStringLiteral("/proc/self/cgroup"));
    if (!membership.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : membership.readAll().split('\n')) {
        // "0::/system.slice/ciphermq.service" (v2) or "4:memory:/system.slice/..." (v1)
        const QList<QByteArray> fields = line.split(':');
        if (fields.size() < 3)
            continue;
        const QString path = QString::fromUtf8(fields.mid(2).join(':').trimmed());
        qint64 limit = 0;
        if (fields[0] == "0" && fields[1].isEmpty())
            limit = readFirstNumber(QStringLiteral("/sys/fs/cgroup%1/memory.max").arg(path), "");
        else if (fields[1].split(',').contains("memory"))
            limit = readFirstNumber(
                QStringLiteral("/sys/fs/cgroup/memory%1/memory.limit_in_bytes").arg(path), "");
        if (limit > 0)
            return limit;
    }
    return 0;
}

qint64 automaticMemoryBudget()
{
    qint64 memory = readFirstNumber(QStringLiteral("/proc/meminfo"), "MemTotal:") * 1024;
    const qint64 limit = cgroupMemoryLimit();
    if (limit > 0 && (memory == 0 || limit < memory))
        memory = limit;
    return memory / 100 * kAutomaticPercent;
}

} // namespace cmq::limits
