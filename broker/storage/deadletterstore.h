#pragma once
// Dead-letter SQL (migration 6): queue entries moving between queues with their dead-letter
// records, in one transaction, and the records read back at start-up.

#include <QList>

#include "routerstore.h"
#include "sqlsession.h"
#include "storage.h"
#include "util/result.h"

namespace cmq::storage {

// Every move as one transaction: the entry leaves its queue (with its record, if it was a
// dead letter there) and joins each target (with the move's record, if it has a reason).
Status moveEntries(SqlSession &session, const QList<EntryMove> &moves);
// The records of the entries still waiting (a record outlives its entry until the next
// cleanup; those are left out).
Result<QList<DeadLetterEntry>> loadDeadLetters(SqlSession &session);
// Requeue of the dead letters in `queue`'s backlog (its entries from the backlogStart() on,
// none of them in memory): each whose original queue exists, is not `queue` and does not hold
// the message already moves back there, all in one transaction. What each original queue got.
Result<QList<RequeuedBacklog>> requeueBacklogDeadLetters(SqlSession &session, const QString &queue,
                                                          qint64 afterEntryId,
                                                          const QByteArray &fromMessageId);
// Drops the records whose entry has left its queue (acknowledged, evicted, purged).
Status purgeFinishedDeadLetters(SqlSession &session);

} // namespace cmq::storage
