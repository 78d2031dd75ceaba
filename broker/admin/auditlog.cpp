#include "admin/auditlog.h"

#include "admin/adminlog.h"

namespace cmq {

AuditLog::AuditLog(int capacity, Persist persist)
    : m_capacity(qMax(1, capacity)), m_persist(std::move(persist))
{
}

void AuditLog::restore(const QList<storage::AuditRecord> &records)
{
    for (const storage::AuditRecord &r : records) {
        hold(r);
        m_nextId = qMax(m_nextId, r.id + 1);
    }
}

void AuditLog::record(storage::AuditRecord record, std::function<void()> done)
{
    record.id = m_nextId++;
    record.time = QDateTime::currentDateTimeUtc();
    qCInfo(lcAudit, "admin action %lld: %s from %s: %s %s: %s (%s)", record.id,
           qPrintable(record.cn), qPrintable(record.address), qPrintable(record.action),
           qPrintable(record.target), qPrintable(record.result), qPrintable(record.detail));
    hold(record);
    if (!m_persist) {
        if (done)
            done();
        return;
    }
    const qint64 id = record.id;
    m_persist(record, [id, done = std::move(done)](Status saved) {
        if (!saved)
            qCWarning(lcAudit, "admin action %lld not written to the database: %s", id,
                      qPrintable(saved.error()));
        if (done)
            done();
    });
}

void AuditLog::hold(const storage::AuditRecord &record)
{
    m_ring.append(record);
    if (m_ring.size() > m_capacity)
        m_ring.removeFirst();
}

QList<storage::AuditRecord> AuditLog::latest(int count) const
{
    return m_ring.mid(qMax<qsizetype>(0, m_ring.size() - count));
}

QJsonObject AuditLog::toJson(const storage::AuditRecord &r)
{
    return QJsonObject{
        {QStringLiteral("id"), r.id},
        {QStringLiteral("time"), r.time.toUTC().toString(Qt::ISODateWithMs)},
        {QStringLiteral("cn"), r.cn},
        {QStringLiteral("address"), r.address},
        {QStringLiteral("action"), r.action},
        {QStringLiteral("target"), r.target},
        {QStringLiteral("result"), r.result},
        {QStringLiteral("detail"), r.detail},
    };
}

QJsonArray AuditLog::toJson(const QList<storage::AuditRecord> &records)
{
    QJsonArray array;
    for (const storage::AuditRecord &r : records)
        array.append(toJson(r));
    return array;
}

} // namespace cmq
