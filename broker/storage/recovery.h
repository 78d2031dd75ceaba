#pragma once
// Start-up load of the durable state: topology and the queue entries with their envelopes,
// all of them or, with a window, each queue's head and the size of the rest.

#include "sqlsession.h"
#include "storage.h"
#include "util/result.h"

namespace cmq::storage {

// Entries come in entry-id order, which is publish order within each queue. Forward-only
// queries stream rows (libpq single-row mode) instead of buffering the whole result.
// `windowPerQueue` > 0: at most that many entries of each queue, plus RecoveredState::backlogs,
// which, without `countBacklogs`, are those of the queues whose head is all they hold (the others
// are in RecoveredState::uncounted).
Result<RecoveredState> loadState(SqlSession &session, int windowPerQueue = 0,
                                 bool countBacklogs = true);

} // namespace cmq::storage
