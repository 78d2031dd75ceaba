#pragma once
// The publish writers: one per database, picked by the connection (publishWriterFor()). Each
// writes one batch's candidates (metadata, envelope, queue entries) in one transaction and
// reports the ids it inserted; ids already in the database are skipped by the primary key.
// tst_PublishParity checks that the writers store the same rows.

#include <QList>
#include <QSet>
#include <QString>

#include "publishstore.h"
#include "sqlsession.h"
#include "util/result.h"

namespace cmq::storage {

class PublishWriter
{
public:
    virtual ~PublishWriter() = default;
    // Every inserted metadata row carries `commitToken` (see resolveInDoubt()).
    virtual Result<QSet<QString>> write(SqlSession &session, const QList<MessageRecord> &records,
                                        const PublishPlan &plan, qint64 commitToken) const = 0;
};

// The writer for the session's database. The session decides once per connection whether
// PostgreSQL's parameters travel in binary through libpq or as literals through QtSql.
const PublishWriter &publishWriterFor(const SqlSession &session);

} // namespace cmq::storage
