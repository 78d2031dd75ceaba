#pragma once
// What the router counts as it works. The metrics tables (metrics/metrictables.h) read these
// fields directly, so a new router counter is a field here, the line that counts it and its row
// there.

#include <QtGlobal>

#include "core/deadletter.h"

namespace cmq {

struct RouterStats
{
    quint64 routed = 0;     // stored (committed) and enqueued
    quint64 unroutable = 0; // refused: no queue bound
    quint64 duplicates = 0; // refused: message id already known
    quint64 rejected = 0;   // refused: queue full, message over a byte limit, memory alarm,
                            // storage failed
    quint64 delivered = 0;
    quint64 redelivered = 0;
    quint64 acknowledged = 0;
    quint64 evicted = 0;
    quint64 expired = 0; // dropped once past their TTL, never delivered
    quint64 nackDropped = 0;
    quint64 ackTimeouts = 0;
    // Sent on to a dead-letter exchange, by DeadLetterReason; dead letters requeued by an admin.
    quint64 deadLettered[DeadLetterReasonCount] = {};
    quint64 deadLettersRequeued = 0;
};

} // namespace cmq
