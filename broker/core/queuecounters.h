#pragma once
// What one queue counts as messages pass through it, since start. The queue owns these and the
// metrics table (metrics/metrictables.h, kQueueFigureSpecs) reads the fields directly, so a new
// per-queue counter is a field here, the line that counts it and its row there.

#include <QtGlobal>

namespace cmq {

struct QueueCounters
{
    quint64 published = 0; // enqueued (committed), dead letters arriving included
    quint64 delivered = 0; // to consumers and fetches, redeliveries included
    quint64 acknowledged = 0;
    quint64 redelivered = 0;
    quint64 evicted = 0;      // dropped from the head of a full drop-head queue
    quint64 expired = 0;      // dropped undelivered once past their TTL
    quint64 deadLettered = 0; // sent on to the dead-letter exchange
};

} // namespace cmq
