#include "auditstore.h"

#include <QSqlQuery>

namespace cmq::storage {

Status saveAuditRecord(SqlSession &session, const AuditRecord &r)
{
    const SqlSession &s = session;
    // The id comes from the broker, so the ring and the table agree; replaying a record after
    // a lost connection finds it already written.
    return session.execTransaction({
        QStringLiteral("INSERT INTO admin_audit (id, at, cn, remote_address, action, target, "
                       "result, detail) VALUES (") +
            SqlSession::integer(r.id) + u',' + s.time(r.time) + u',' + s.text(r.cn) + u',' +
            s.text(r.address) + u',' + s.text(r.action) + u',' + s.text(r.target) + u',' +
            s.text(r.result) + u',' + s.text(r.detail) +
            QStringLiteral(") ON CONFLICT (id) DO NOTHING"),
        QStringLiteral("DELETE FROM admin_audit WHERE id <= ") +
            SqlSession::integer(r.id - MaxStoredAuditRecords),
    });
}

Result<QList<AuditRecord>> loadAuditRecords(SqlSession &session, int limit)
{
    QSqlQuery query = session.newQuery();
    Status st = session.run(query, QStringLiteral("SELECT id, at, cn, remote_address, action, "
                                                  "target, result, detail FROM admin_audit "
                                                  "ORDER BY id DESC LIMIT ") +
                                       SqlSession::integer(limit));
    if (!st)
        return Result<QList<AuditRecord>>::failure(st.error());
    QList<AuditRecord> records;
    while (query.next()) {
        records.prepend(AuditRecord{query.value(0).toLongLong(), session.toTime(query.value(1)),
                                    query.value(2).toString(), query.value(3).toString(),
                                    query.value(4).toString(), query.value(5).toString(),
                                    query.value(6).toString(), query.value(7).toString()});
    }
    if (st = session.finish(query); !st)
        return Result<QList<AuditRecord>>::failure(st.error());
    return records;
}

} // namespace cmq::storage
