#include "metrics/queuestats.h"

#include "core/queue.h"

namespace cmq::metrics {

QueueFigures queueFigures(Queue &queue)
{
    QueueFigures f;
    f.ready = queue.readyCount();
    f.unacked = queue.unackedCount();
    f.consumers = queue.consumers().size();
    f.bytes = queue.bytes();
    f.published = qint64(queue.publishedTotal);
    f.delivered = qint64(queue.deliveredTotal);
    f.acknowledged = qint64(queue.acknowledgedTotal);
    f.redelivered = qint64(queue.redeliveredTotal);
    f.evicted = qint64(queue.evictedTotal);
    f.expired = qint64(queue.expiredTotal);
    f.deadLettered = qint64(queue.deadLetteredTotal);
    return f;
}

} // namespace cmq::metrics
