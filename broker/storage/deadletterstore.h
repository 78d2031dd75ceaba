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
// Drops the records whose entry has left its queue (acknowledged, evicted, purged).
Status purgeFinishedDeadLetters(SqlSession &session);

} // namespace cmq::storage
