#pragma once
// Audit-trail SQL: the admin_audit table (migration 5), newest rows kept, older ones dropped.

#include <QList>

#include "auditrecord.h"
#include "sqlsession.h"
#include "util/result.h"

namespace cmq::storage {

// Rows kept in the database; older ones go when a newer one is written.
inline constexpr qint64 MaxStoredAuditRecords = 100000;

Status saveAuditRecord(SqlSession &session, const AuditRecord &record);
// The newest `limit` records, oldest first.
Result<QList<AuditRecord>> loadAuditRecords(SqlSession &session, int limit);

} // namespace cmq::storage
