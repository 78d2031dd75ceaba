// Settling deliveries, part of the delivery engine: ack and nack of a delivery awaiting this
// connection's ack, a delivery put back at its queue's head in its original order (or given up
// once at the queue's delivery limit), resend, and the ack timeout.

#include <algorithm>

#include "core/corelog.h"
#include "core/deliveryengine.h"
#include "core/endpoint.h"
#include "core/livemessages.h"
#include "core/routerstats.h"
#include "core/topology.h"
#include "storage/storage.h"

namespace cmq {

Delivery DeliveryEngine::takeDelivery(Queue *queue, const QByteArray &messageId)
{
    Delivery delivery = queue->unacked().take(messageId);
    if (delivery.consumer)
        --delivery.consumer->unacked;
    auto stateIt = m_endpoints.find(delivery.endpoint);
    if (stateIt != m_endpoints.end()) {
        auto idIt = stateIt->unacked.find(messageId);
        if (idIt != stateIt->unacked.end()) {
            idIt->removeOne(queue);
            if (idIt->isEmpty())
                stateIt->unacked.erase(idIt);
        }
    }
    return delivery;
}

Queue *DeliveryEngine::awaitingQueue(Endpoint *endpoint, const QByteArray &messageId) const
{
    const auto stateIt = m_endpoints.constFind(endpoint);
    const QList<Queue *> queues =
        stateIt == m_endpoints.cend() ? QList<Queue *>{} : stateIt->unacked.value(messageId);
    return queues.isEmpty() ? nullptr : queues.first();
}

static Refusal notAwaitingAck(const QByteArray &messageId)
{
    return Refusal::of(Refusal::Kind::NotAwaitingAck, QString::fromUtf8(messageId));
}

Verdict DeliveryEngine::ack(Endpoint *endpoint, const QByteArray &messageId)
{
    Queue *queue = awaitingQueue(endpoint, messageId);
    if (!queue)
        return notAwaitingAck(messageId);
    const Delivery delivery = takeDelivery(queue, messageId);
    queue->addBytes(-delivery.message->envelope.size());
    ++queue->counters.acknowledged;
    ++m_stats.acknowledged;
    m_store.markAcknowledged(queue->name(), messageId);
    m_live.release(messageId);
    dispatch(queue); // prefetch room freed
    return accepted();
}

bool DeliveryEngine::awaitsAck(Endpoint *endpoint, const QByteArray &messageId) const
{
    const auto stateIt = m_endpoints.constFind(endpoint);
    return stateIt != m_endpoints.cend() && stateIt->unacked.contains(messageId);
}

Verdict DeliveryEngine::nack(Endpoint *endpoint, const QByteArray &messageId, bool requeue)
{
    Queue *queue = awaitingQueue(endpoint, messageId);
    if (!queue)
        return notAwaitingAck(messageId);
    Delivery delivery = takeDelivery(queue, messageId);
    if (requeue) {
        requeueFront(queue, {delivery});
    } else {
        ++m_stats.nackDropped;
        queue->addBytes(-delivery.message->envelope.size());
        giveUp(queue,
               ReadyMessage{delivery.message, delivery.redelivered, delivery.deliveryCount,
                            delivery.deadLetter},
               DeadLetterReason::Rejected);
    }
    dispatch(queue);
    return accepted();
}

void DeliveryEngine::requeueFront(Queue *queue, QList<Delivery> deliveries)
{
    // Newest first onto the front, so the oldest ends up first: original order is kept.
    std::sort(deliveries.begin(), deliveries.end(),
              [](const Delivery &a, const Delivery &b) { return a.seq > b.seq; });
    const qint64 limit = queue->deadLetterPolicy().deliveryLimit;
    for (const Delivery &d : deliveries) {
        ReadyMessage back{d.message, true, d.deliveryCount, d.deadLetter};
        if (limit > 0 && d.deliveryCount >= limit) {
            // A poison message: it went out `limit` times and came back each time.
            queue->addBytes(-d.message->envelope.size());
            giveUp(queue, std::move(back), DeadLetterReason::DeliveryLimit);
            continue;
        }
        queue->ready().push_front(std::move(back));
    }
}

DeliveryEngine::ResendOutcome DeliveryEngine::resend(const QString &requester, bool isAdmin,
                                                     const QByteArray &messageId)
{
    const QString *sender = m_live.senderOf(messageId);
    if (!sender)
        return ResendOutcome::NotFound;
    if (!isAdmin && *sender != requester)
        return ResendOutcome::Unauthorized;
    // Deliveries still awaiting an ack go back to the head of their queue and out again;
    // messages not yet delivered are already on their way.
    for (Queue *queue : std::as_const(m_topology.queues())) {
        if (!queue->unacked().contains(messageId))
            continue;
        requeueFront(queue, {takeDelivery(queue, messageId)});
        dispatch(queue);
    }
    return ResendOutcome::Requested;
}

void DeliveryEngine::expireUnacked()
{
    const qint64 limitMs = qint64(m_performance.ackTimeoutSec) * 1000;
    const qint64 now = nowMs();
    for (Queue *queue : std::as_const(m_topology.queues())) {
        QList<QByteArray> expired;
        for (auto it = queue->unacked().cbegin(); it != queue->unacked().cend(); ++it) {
            if (now - it->deliveredAtMs >= limitMs)
                expired.append(it.key());
        }
        if (expired.isEmpty())
            continue;
        QList<Delivery> deliveries;
        for (const QByteArray &id : std::as_const(expired))
            deliveries.append(takeDelivery(queue, id));
        m_stats.ackTimeouts += quint64(expired.size());
        qCInfo(lcRouter, "requeued %lld deliveries on %s after the ack timeout",
               qlonglong(expired.size()), qPrintable(queue->name()));
        requeueFront(queue, deliveries);
        dispatch(queue);
    }
}

} // namespace cmq
