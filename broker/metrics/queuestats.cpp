#include "metrics/queuestats.h"

#include "core/queue.h"

namespace cmq::metrics {

QueueStats queueStats(Queue &queue)
{
    QueueStats stats;
    stats.ready = queue.readyCount();
    stats.unacked = queue.unackedCount();
    stats.consumers = queue.consumers().size();
    stats.bytes = queue.bytes();
    return stats;
}

} // namespace cmq::metrics
