#pragma once
// Queue-backlog SQL: what each queue holds in the database, as numbers, and the keyset reads
// that page a queue's entries in, in its order (queue_entries.id), as consumers drain it.

#include <optional>

#include "sqlsession.h"
#include "storage.h"
#include "util/result.h"

namespace cmq::storage {

// The envelope of queue entry `e`: its own (a message held by one queue, migration 14), or else
// the message's shared message_bodies row. COALESCE evaluates the subquery only when the entry
// has none, so single-queue entries cost no look-up; rows written before migration 14 read the
// shared row.
inline constexpr char EntryEnvelope[] =
    "COALESCE(e.envelope, (SELECT b.envelope FROM message_bodies b "
    "WHERE b.message_id = e.message_id))";
// True when entry `e` has an envelope somewhere (as the inner join with message_bodies was): an
// entry whose envelope is gone is not read back.
inline constexpr char EntryHasEnvelope[] =
    "(e.envelope IS NOT NULL OR EXISTS (SELECT 1 FROM message_bodies b "
    "WHERE b.message_id = e.message_id))";

// Messages per queue that holds any (bytes left 0: see loadQueueHeads in recovery.cpp), as one
// statement: in the caller's transaction if it has one (the background count's snapshot,
// backlogcounter.h). No JIT compiles it on PostgreSQL: the session has JIT off (dialect.cpp).
Result<QList<QueueBacklog>> countQueueEntries(SqlSession &session);

// The SQL condition on `queue_entries e` that selects a queue's backlog: after entry
// `afterEntryId`, or, when `fromMessageId` is set, from that message's entry on.
QString backlogStart(const SqlSession &session, const QString &queue, qint64 afterEntryId,
                     const QByteArray &fromMessageId);

// Up to `limit` entries of `queue` in its order: after entry `afterEntryId`, or, when
// `fromMessageId` is set, from that message's entry on.
Result<QueuePage> loadQueuePage(SqlSession &session, const QString &queue, qint64 afterEntryId,
                                const QByteArray &fromMessageId, int limit);

// The publisher of `messageId` while some queue holds it.
Result<std::optional<QString>> senderOfQueued(SqlSession &session, const QByteArray &messageId);

} // namespace cmq::storage
