// Message expiry, part of the delivery engine: a ready message past its TTL (the queue's
// message_ttl_ms, the envelope's ttl_ms, whichever is shorter) is dropped, never delivered.
// Dispatch and fetch drop what is expired at a queue's head before delivering; a timer sweeps
// the heads of all queues at a bounded cost, so messages nobody consumes are freed too. Only
// heads are examined: a message with a short TTL of its own behind longer-lived ones is dropped
// when it reaches the head (docs/PROTOCOL.md, "Expiry"). Stored like an eviction.

#include <QDateTime>

#include "core/corelog.h"
#include "core/deliveryengine.h"
#include "core/router.h"
#include "core/topology.h"

namespace cmq {

qint64 DeliveryEngine::dropExpiredHead(Queue *queue, qint64 nowMs, qint64 budget)
{
    const DeadLetterBatch batch(*this); // those dead-lettered are moved in one transaction
    qint64 dropped = 0;
    while (dropped < budget && !queue->ready().empty()) {
        const MessagePtr head = queue->ready().front().message;
        const qint64 expiresAt = queue->expiresAtMs(*head);
        if (expiresAt == 0 || expiresAt > nowMs)
            break;
        dropReadyHead(queue, DeadLetterReason::Expired);
        ++queue->counters.expired;
        ++m_stats.expired;
        ++dropped;
        qCDebug(lcRouter) << "expired" << head->id << "in queue" << queue->name();
    }
    return dropped;
}

qint64 DeliveryEngine::sweepExpired(qint64 budget)
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const DeadLetterBatch batch(*this); // one transaction for the whole sweep
    qint64 dropped = 0;
    for (Queue *queue : m_topology.queues()) {
        if (dropped >= budget)
            break;
        dropped += dropExpiredHead(queue, now, budget - dropped);
    }
    return dropped;
}

} // namespace cmq
