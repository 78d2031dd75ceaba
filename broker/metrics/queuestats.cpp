#include "metrics/queuestats.h"

#include "core/queue.h"

namespace cmq::metrics {

QueueStats queueStats(Queue &queue)
{
    QueueStats stats;
    stats.ready = queue.readyCount();
    stats.unacked = queue.unackedCount();
    stats.consumers = queue.consumers().size();
    for (const ReadyMessage &ready : queue.ready())
        stats.bytes += ready.message->envelope.size();
    for (const Delivery &delivery : std::as_const(queue.unacked()))
        stats.bytes += delivery.message->envelope.size();
    return stats;
}

} // namespace cmq::metrics
