#pragma once
// Delivery-state SQL: the batched delivered/acknowledged/evicted updates and the background
// purge of metadata past its retention.

#include <QDateTime>
#include <QList>
#include <QString>

#include "sqlsession.h"
#include "util/result.h"

namespace cmq::storage {

struct DeliveryUpdate
{
    enum class Kind { Delivered, Acknowledged, Evicted };
    Kind kind = Kind::Delivered;
    QString queue;
    QString messageId;
    QDateTime at; // when the broker saw it happen, UTC
};

// Applies the updates in one transaction. Acknowledged and Evicted remove the queue entry, and
// the envelope once no queue references it; the metadata row keeps the times and the state.
// Applying the same updates twice is harmless, so a batch cut off by a lost connection can be
// sent again.
Status applyDeliveryUpdates(SqlSession &session, const QList<DeliveryUpdate> &updates);

// PostgreSQL: the settings an update transaction takes for itself, as one statement that sets
// them for the whole session instead, for a connection that writes nothing but delivery
// updates (SqlSession::updatesOnly()). Run on every (re)connect of such a connection.
const char *updatesOnlySessionSettings();

// Deletes up to `limit` metadata rows whose message left every queue and whose last event is
// older than `cutoff`. Returns how many were deleted.
Result<qint64> purgeExpiredMetadata(SqlSession &session, const QDateTime &cutoff, int limit);

} // namespace cmq::storage
