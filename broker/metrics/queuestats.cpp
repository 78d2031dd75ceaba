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
    f.counted = queue.figuresExact() ? 1 : 0;
    f.counters = queue.counters;
    return f;
}

} // namespace cmq::metrics
