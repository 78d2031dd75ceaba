#pragma once
// Queue-backlog SQL: what each queue holds in the database, as numbers, and the keyset reads
// that page a queue's entries in, in its order (queue_entries.id), as consumers drain it.

#include <optional>

#include "sqlsession.h"
#include "storage.h"
#include "util/result.h"

namespace cmq::storage {

// Messages per queue that holds any (bytes left 0: see loadQueueHeads in recovery.cpp).
Result<QList<QueueBacklog>> loadQueueBacklogs(SqlSession &session);

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
