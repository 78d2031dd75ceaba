#pragma once
// One queue's figures for metrics and the admin views (metrics/metrictables.h names them).

#include "metrics/metrictables.h"

namespace cmq {
class Queue;
}

namespace cmq::metrics {

QueueFigures queueFigures(Queue &queue);

} // namespace cmq::metrics
