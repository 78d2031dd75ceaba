#pragma once
// Topology SQL: exchanges, queues and bindings as declared, and whole-queue deletes.

#include "sqlsession.h"
#include "storage.h"
#include "util/result.h"

namespace cmq::storage {

// The first declarer stays the creator/owner; a later save updates type and limits only.
Status saveExchange(SqlSession &session, const ExchangeRecord &exchange);
Status saveQueue(SqlSession &session, const QueueRecord &queue);
Status saveBinding(SqlSession &session, const BindingRecord &binding);

// The queue's entries (and envelopes no other queue references) and bindings, then the queue.
Status deleteQueue(SqlSession &session, const QString &queue);
// The queue's entries and envelopes only.
Status purgeQueue(SqlSession &session, const QString &queue);

} // namespace cmq::storage
