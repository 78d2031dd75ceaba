#pragma once
// Start-up load of the durable state: topology and every queue entry with its envelope.

#include "sqlsession.h"
#include "storage.h"
#include "util/result.h"

namespace cmq::storage {

// Entries come in entry-id order, which is publish order within each queue. Forward-only
// queries stream rows (libpq single-row mode) instead of buffering the whole result.
Result<RecoveredState> loadState(SqlSession &session);

} // namespace cmq::storage
