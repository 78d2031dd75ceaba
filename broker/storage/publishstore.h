#pragma once
// The publish path's SQL: one group-commit batch of records written in one transaction
// (metadata, envelope and queue entries), deduplicated by message id against the primary key,
// and the after-the-fact answer when the connection died before the commit was confirmed.

#include <QList>
#include <QSet>
#include <QString>

#include "sqlsession.h"
#include "storage.h"

namespace cmq::storage {

// What the batch looks like before SQL: records that cannot be written at all get Failed,
// repeats of an id earlier in the same batch get Duplicate, and the rest are candidates.
struct PublishPlan
{
    QList<PublishResult> results; // one per record; candidates are filled in after the write
    QList<qsizetype> candidates;  // indexes into the records, in batch order
    QList<QString> ids;           // message id as text, per record
    QList<QStringList> queues;    // target queues per record, repeats removed
};

PublishPlan planPublish(const QList<MessageRecord> &records);

// Writes the candidates in one transaction with the session's writer (publishwriter.h) and
// returns the ids that were inserted (the others were already in the database). Every inserted
// metadata row carries `commitToken`, which is how resolveInDoubt() recognises this
// transaction's rows later.
Result<QSet<QString>> writePublishBatch(SqlSession &session, const QList<MessageRecord> &records,
                                        const PublishPlan &plan, qint64 commitToken);

struct InDoubtResolution
{
    QSet<QString> inserted; // rows written by the transaction tagged with the token
    QSet<QString> existing; // rows that exist but were written by someone else (duplicates)
};

// For a batch whose commit outcome was lost with the connection: looks the candidates up on a
// fresh connection. Ids found in neither set were not written (that transaction never
// committed, or it committed nothing new).
Result<InDoubtResolution> resolveInDoubt(SqlSession &session, const PublishPlan &plan,
                                         qint64 commitToken);

// Fills in the candidates' results from the set of inserted ids.
void completePlan(PublishPlan &plan, const QSet<QString> &inserted);

} // namespace cmq::storage
