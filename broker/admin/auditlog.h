#pragma once
// The audit trail of admin actions (docs/ADMIN-PROTOCOL.md, "audit"): every purge,
// delete_queue, disconnect and reload, and every action refused to a read-only identity, goes
// to the log (category ciphermq.audit), to a bounded ring that `audit [n]` reads, and to the
// database, which refills the ring at start-up.

#include <functional>

#include <QJsonArray>
#include <QJsonObject>
#include <QList>

#include "storage/auditrecord.h"
#include "util/result.h"

namespace cmq {

class AuditLog
{
public:
    using Persist = std::function<void(const storage::AuditRecord &, std::function<void(Status)>)>;

    // `capacity` entries are held in memory (admin.audit_entries); `persist` writes one.
    AuditLog(int capacity, Persist persist);

    // Start-up: the newest records from the database, oldest first.
    void restore(const QList<storage::AuditRecord> &records);
    // Numbers, logs, holds and persists `record` (its id and time are set here); `done` runs
    // once the database has it (or failed to take it, which is logged), so a reply sent from
    // `done` means the action is on record.
    void record(storage::AuditRecord record, std::function<void()> done);

    // The newest `count` entries, oldest first.
    QList<storage::AuditRecord> latest(int count) const;
    qint64 lastId() const { return m_nextId - 1; }
    int capacity() const { return m_capacity; }
    qsizetype size() const { return m_ring.size(); }

    static QJsonObject toJson(const storage::AuditRecord &record);
    static QJsonArray toJson(const QList<storage::AuditRecord> &records);

private:
    void hold(const storage::AuditRecord &record);

    const int m_capacity;
    Persist m_persist;
    QList<storage::AuditRecord> m_ring; // oldest first, at most m_capacity
    qint64 m_nextId = 1;
};

} // namespace cmq
