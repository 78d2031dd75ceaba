#pragma once
// Per-queue figures for metrics and the admin views: counts, consumers and the envelope bytes
// a queue holds.

#include <QtGlobal>

namespace cmq {
class Queue;
}

namespace cmq::metrics {

struct QueueStats
{
    qint64 ready = 0;
    qint64 unacked = 0;
    qint64 consumers = 0;
    qint64 bytes = 0; // envelope bytes of ready + unacked messages
};

QueueStats queueStats(Queue &queue);

} // namespace cmq::metrics
