// Storage's audit-trail calls (kept apart from storage.cpp, which holds the publish path).

#include <optional>

#include "auditstore.h"
#include "storage.h"
#include "storageworker.h"

namespace cmq::storage {

void Storage::saveAudit(const AuditRecord &record, StatusCallback done)
{
    runOrdered([record](SqlSession &s) { return saveAuditRecord(s, record); }, std::move(done));
}

Result<QList<AuditRecord>> Storage::loadAudit(int limit)
{
    if (!m_opened)
        return Result<QList<AuditRecord>>::failure(QStringLiteral("storage is not open"));
    std::optional<Result<QList<AuditRecord>>> result;
    QMetaObject::invokeMethod(
        m_worker,
        [&] {
            m_worker->run(
                [&](SqlSession &s) {
                    result = loadAuditRecords(s, limit);
                    return result->ok() ? success() : failure(result->error());
                },
                {});
        },
        Qt::BlockingQueuedConnection);
    if (!result)
        return Result<QList<AuditRecord>>::failure(QStringLiteral("storage worker did not run"));
    return std::move(*result);
}

} // namespace cmq::storage
