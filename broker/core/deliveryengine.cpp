#include "core/deliveryengine.h"

#include <algorithm>

#include "core/corelog.h"
#include "core/endpoint.h"
#include "core/livemessages.h"
#include "core/router.h"
#include "core/topology.h"
#include "limits/clock.h"
#include "protocol/envelope.h"
#include "storage/storage.h"

namespace cmq {

DeliveryEngine::DeliveryEngine(Topology &topology, LiveMessages &live, storage::RouterStore &store,
                               RouterStats &stats, const Config::Performance &performance,
                               const limits::Clock *clock, QObject *parent)
    : QObject(parent), m_topology(topology), m_live(live),
      m_pager(topology, live, store, performance), m_store(store), m_stats(stats),
      m_performance(performance),
      m_ownClock(clock ? nullptr : std::make_unique<limits::SteadyClock>()),
      m_clock(clock ? *clock : *m_ownClock)
{
    // Check often enough that a delivery is requeued within ~10% of its timeout.
    const int intervalMs = std::clamp(performance.ackTimeoutSec * 100, 200, 5000);
    m_ackTimeoutTimer.setInterval(intervalMs);
    connect(&m_ackTimeoutTimer, &QTimer::timeout, this, &DeliveryEngine::expireUnacked);
    m_ackTimeoutTimer.start();
    // Expired messages are skipped at delivery anyway; the sweep frees what nobody consumes.
    m_expiryTimer.setInterval(1000);
    connect(&m_expiryTimer, &QTimer::timeout, this, [this] { sweepExpired(ExpirySweepBudget); });
    m_expiryTimer.start();
    m_pager.onPageArrived = [this](Queue *queue) {
        if (!queue->rejectsWhenFull())
            evictForRoom(queue, 0, 0); // publishes counted while the window was empty
        dispatch(queue);
    };
}

DeliveryEngine::~DeliveryEngine()
{
    for (EndpointState &state : m_endpoints)
        qDeleteAll(state.consumers);
}

qint64 DeliveryEngine::nowMs() const
{
    return m_clock.nowNs() / 1000000;
}

void DeliveryEngine::restore(const QList<storage::QueueEntry> &entries,
                             const QList<storage::QueueBacklog> &backlogs,
                             const QStringList &uncounted)
{
    struct Head
    {
        qint64 lastEntryId = 0;
        qint64 messages = 0;
        qint64 bytes = 0;
    };
    QHash<Queue *, Head> heads;
    for (const storage::QueueEntry &entry : entries) {
        Queue *queue = m_topology.queue(entry.queue);
        if (!queue)
            continue;
        // One Message object per id, shared by every queue it is waiting in. How often an
        // unacknowledged delivery went out before the restart is not stored: at least once.
        const MessagePtr message = m_pager.messageFor(entry);
        queue->ready().push_back(ReadyMessage{message, entry.redelivered, entry.redelivered ? 1 : 0,
                                              deadLetterRecord(entry)});
        m_live.hold(queue, message);
        Head &head = heads[queue];
        head.lastEntryId = entry.entryId;
        ++head.messages;
        head.bytes += message->envelope.size();
    }
    for (const storage::QueueBacklog &backlog : backlogs) {
        if (Queue *queue = m_topology.queue(backlog.queue)) {
            const Head head = heads.value(queue);
            m_pager.restoreBacklog(queue, backlog, head.lastEntryId, head.messages, head.bytes);
        }
    }
    if (uncounted.isEmpty())
        return;
    for (const QString &name : uncounted) {
        if (Queue *queue = m_topology.queue(name)) {
            const Head head = heads.value(queue);
            m_pager.awaitCount(queue, head.lastEntryId, head.messages, head.bytes);
        }
    }
    m_store.countQueueBacklogs([this, uncounted](Result<QList<storage::QueueBacklog>> counted) {
        if (!counted) {
            // The figures stay lower bounds; the queues are still served in order, each publish
            // behind what the database holds (core/queuepager.h).
            qCWarning(lcRouter,
                      "cannot count the backlogs of %lld queues: %s; their depth and byte "
                      "figures stay lower bounds until the next start",
                      qlonglong(uncounted.size()), qPrintable(counted.error()));
            return;
        }
        QHash<QString, qint64> byQueue;
        for (const storage::QueueBacklog &backlog : counted.value())
            byQueue.insert(backlog.queue, backlog.messages);
        qint64 settled = 0;
        for (const QString &name : uncounted) {
            if (Queue *queue = m_topology.queue(name))
                settled += m_pager.settleCount(queue, byQueue.value(name)) ? 1 : 0;
        }
        qCInfo(lcRouter, "backlogs of %lld queues counted (%lld were still waiting for it)",
               qlonglong(uncounted.size()), qlonglong(settled));
    });
}

void DeliveryEngine::enqueue(Queue *queue, const MessagePtr &message)
{
    // drop-head: make room by evicting the oldest ready message (as the seed did, but counted
    // and recorded). Unacked deliveries are never evicted: they are in a consumer's hands.
    if (!queue->rejectsWhenFull())
        evictForRoom(queue, 1, message->envelope.size());
    ++queue->counters.published;
    if (!m_pager.admitToWindow(queue, message->envelope.size()))
        return m_pager.addToBacklog(queue, *message); // committed, counted, not held
    queue->ready().push_back(ReadyMessage{message, false, 0, nullptr});
    m_live.hold(queue, message);
}

bool DeliveryEngine::withdraw(Queue *queue, const QByteArray &messageId)
{
    auto &ready = queue->ready();
    // From the back: it was published moments ago.
    const auto it = std::find_if(ready.rbegin(), ready.rend(),
                                 [&](const ReadyMessage &r) { return r.message->id == messageId; });
    if (it == ready.rend())
        return false;
    queue->addBytes(-it->message->envelope.size());
    --queue->counters.published;
    ready.erase(std::next(it).base());
    m_live.release(messageId);
    return true;
}

void DeliveryEngine::evictForRoom(Queue *queue, qsizetype room, qint64 roomBytes)
{
    const auto overLimit = [queue, room, roomBytes] {
        return queue->depth() + room > queue->maxLength() ||
               (queue->maxBytes() > 0 && queue->bytes() + roomBytes > queue->maxBytes());
    };
    const DeadLetterBatch batch(*this); // those dead-lettered are moved in one transaction
    while (overLimit() && !queue->ready().empty()) {
        const MessagePtr evicted = dropReadyHead(queue, DeadLetterReason::Overflow);
        ++queue->counters.evicted;
        ++m_stats.evicted;
        qCDebug(lcRouter) << "evicted" << evicted->id << "from full queue" << queue->name();
    }
}

MessagePtr DeliveryEngine::dropReadyHead(Queue *queue, DeadLetterReason reason)
{
    ReadyMessage head = std::move(queue->ready().front());
    queue->ready().pop_front();
    queue->addBytes(-head.message->envelope.size());
    MessagePtr message = head.message;
    giveUp(queue, std::move(head), reason);
    m_pager.refill(queue);
    return message;
}

DeliveryFacts nextDeliveryFacts(const ReadyMessage &ready, bool withMeta)
{
    DeliveryFacts facts;
    facts.redelivered = ready.redelivered;
    facts.deliveryCount = ready.deliveryCount + 1;
    facts.withMeta = withMeta;
    if (ready.deadLetter) {
        const DeadLetterRecord &record = *ready.deadLetter;
        facts.deadLetterReason = QString::fromLatin1(deadLetterReasonName(record.reason));
        facts.deadLetterOriginalQueue = record.originalQueue;
        facts.deadLetteredAtMs = record.at.toMSecsSinceEpoch();
        facts.deadLetterDeliveryCount = record.deliveryCount;
    }
    return facts;
}

void DeliveryEngine::dispatch(Queue *queue)
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    while (!queue->ready().empty()) {
        if (dropExpiredHead(queue, now, ExpirySweepBudget) > 0)
            continue; // never delivered
        Consumer *consumer = queue->nextConsumer();
        if (!consumer)
            return;
        const ReadyMessage next = std::move(queue->ready().front());
        queue->ready().pop_front();
        deliver(queue, consumer->endpoint, consumer, next);
        consumer->endpoint->pushDelivery(*next.message,
                                         nextDeliveryFacts(next, consumer->withMeta));
    }
}

void DeliveryEngine::deliver(Queue *queue, Endpoint *endpoint, Consumer *consumer,
                             const ReadyMessage &ready)
{
    const QByteArray &id = ready.message->id;
    Delivery delivery;
    delivery.message = ready.message;
    delivery.endpoint = endpoint;
    delivery.consumer = consumer;
    delivery.deliveredAtMs = nowMs();
    delivery.redelivered = ready.redelivered;
    delivery.seq = ++m_deliverySeq;
    delivery.deliveryCount = ready.deliveryCount + 1;
    delivery.deadLetter = ready.deadLetter;
    queue->unacked().insert(id, delivery);
    stateFor(endpoint).unacked[id].append(queue);
    if (consumer)
        ++consumer->unacked;
    ++queue->counters.delivered;
    ++m_stats.delivered;
    if (ready.redelivered) {
        ++queue->counters.redelivered;
        ++m_stats.redelivered;
    }
    m_store.markDelivered(queue->name(), id);
    m_pager.refill(queue);
}

Verdict DeliveryEngine::consume(Endpoint *endpoint, const QString &queueName, bool withMeta)
{
    Queue *queue = m_topology.queue(queueName);
    if (!queue)
        return Refusal::queueNotFound(queueName);
    EndpointState &state = stateFor(endpoint);
    for (Consumer *existing : std::as_const(state.consumers)) {
        if (existing->queue == queue) {
            existing->withMeta = withMeta; // already subscribed: only the form may change
            return accepted();
        }
    }
    auto *consumer = new Consumer{endpoint, queue, state.prefetch, 0, withMeta};
    state.consumers.append(consumer);
    queue->consumers().append(consumer);
    // Deliver what is waiting right away (no fixed delay as in the seed): the endpoint queues
    // these lines behind the "Subscribed to queue" reply, so order on the wire is kept.
    QMetaObject::invokeMethod(
        this,
        [this, queueName] {
            if (Queue *q = m_topology.queue(queueName))
                dispatch(q);
        },
        Qt::QueuedConnection);
    return accepted();
}

void DeliveryEngine::declareAndConsume(Endpoint *endpoint, const QString &queue,
                                       const QString &owner, bool withMeta,
                                       std::function<void(Verdict)> done)
{
    // The ticket lives in the endpoint's state, which endpointClosed() erases: a declare that
    // commits after the close finds no ticket (even if a new connection reuses the address).
    const quint64 ticket = ++m_consumeTicket;
    stateFor(endpoint).pendingConsumes.insert(ticket);
    m_topology.declareQueue(
        queue, owner,
        [this, endpoint, queue, ticket, withMeta, done = std::move(done)](Verdict st) {
            const auto stateIt = m_endpoints.find(endpoint);
            const bool open =
                stateIt != m_endpoints.end() && stateIt->pendingConsumes.remove(ticket);
            if (!st)
                return done(st);
            if (!open)
                return done(Refusal::of(Refusal::Kind::ClosedBeforeSubscribe));
            done(consume(endpoint, queue, withMeta));
        });
}

std::optional<ReadyMessage> DeliveryEngine::fetch(Endpoint *endpoint, const QString &queueName)
{
    Queue *queue = m_topology.queue(queueName);
    if (queue) {
        while (dropExpiredHead(queue, QDateTime::currentMSecsSinceEpoch(), ExpirySweepBudget) > 0) {
        }
    }
    if (!queue || queue->ready().empty())
        return std::nullopt;
    ReadyMessage next = std::move(queue->ready().front());
    queue->ready().pop_front();
    deliver(queue, endpoint, nullptr, next);
    return next;
}

void DeliveryEngine::setPrefetch(Endpoint *endpoint, int prefetch)
{
    EndpointState &state = stateFor(endpoint);
    state.prefetch = prefetch;
    for (Consumer *consumer : state.consumers)
        consumer->prefetch = prefetch;
    endpointWritable(endpoint); // a larger window may allow more deliveries now
}

DeliveryEngine::EndpointState &DeliveryEngine::stateFor(Endpoint *endpoint)
{
    auto it = m_endpoints.find(endpoint);
    if (it == m_endpoints.end())
        it = m_endpoints.insert(endpoint, EndpointState{m_performance.defaultPrefetch, {}, {}, {}});
    return *it;
}

bool DeliveryEngine::isConsuming(Endpoint *endpoint) const
{
    const auto it = m_endpoints.constFind(endpoint);
    return it != m_endpoints.cend() && !it->consumers.isEmpty();
}

DeliveryEngine::EndpointInfo DeliveryEngine::endpointInfo(Endpoint *endpoint) const
{
    EndpointInfo info;
    const auto it = m_endpoints.constFind(endpoint);
    if (it == m_endpoints.cend()) {
        info.prefetch = m_performance.defaultPrefetch;
        return info;
    }
    info.prefetch = it->prefetch;
    for (const Consumer *consumer : it->consumers)
        info.consumedQueues.append(consumer->queue->name());
    for (const QList<Queue *> &queues : it->unacked)
        info.unacked += queues.size();
    return info;
}

qint64 DeliveryEngine::purgeReady(Queue *queue)
{
    const qint64 purged = queue->readyCount();
    for (const ReadyMessage &ready : queue->ready()) {
        queue->addBytes(-ready.message->envelope.size());
        m_live.release(ready.message->id);
    }
    queue->ready().clear();
    m_pager.forget(queue);
    return purged;
}

DeliveryEngine::Forgotten DeliveryEngine::forgetQueue(Queue *queue)
{
    Forgotten forgotten;
    // Deliveries in consumers' hands: forget them on the connection's side too.
    for (auto it = queue->unacked().cbegin(); it != queue->unacked().cend(); ++it) {
        auto stateIt = m_endpoints.find(it->endpoint);
        if (stateIt != m_endpoints.end()) {
            auto idIt = stateIt->unacked.find(it.key());
            if (idIt != stateIt->unacked.end()) {
                idIt->removeAll(queue);
                if (idIt->isEmpty())
                    stateIt->unacked.erase(idIt);
            }
        }
        m_live.release(it.key());
        ++forgotten.messagesDropped;
    }
    for (const ReadyMessage &ready : queue->ready()) {
        m_live.release(ready.message->id);
        ++forgotten.messagesDropped;
    }
    forgotten.messagesDropped += std::max<qint64>(0, queue->backlog.messages); // uncounted: known
    m_pager.forget(queue);
    for (Consumer *consumer : std::as_const(queue->consumers())) {
        auto stateIt = m_endpoints.find(consumer->endpoint);
        if (stateIt != m_endpoints.end())
            stateIt->consumers.removeOne(consumer);
        delete consumer;
        ++forgotten.consumersCancelled;
    }
    return forgotten;
}

void DeliveryEngine::endpointClosed(Endpoint *endpoint)
{
    auto stateIt = m_endpoints.find(endpoint);
    if (stateIt == m_endpoints.end())
        return;
    EndpointState state = std::move(*stateIt);
    m_endpoints.erase(stateIt);

    for (Consumer *consumer : std::as_const(state.consumers))
        consumer->queue->consumers().removeOne(consumer);
    // Unacked deliveries go back to the head of their queue, marked redelivered.
    QHash<Queue *, QList<Delivery>> returned;
    for (auto it = state.unacked.cbegin(); it != state.unacked.cend(); ++it) {
        for (Queue *queue : *it) {
            Delivery delivery = queue->unacked().take(it.key());
            returned[queue].append(delivery);
        }
    }
    qDeleteAll(state.consumers);
    for (auto it = returned.begin(); it != returned.end(); ++it) {
        requeueFront(it.key(), it.value());
        dispatch(it.key());
    }
}

void DeliveryEngine::endpointWritable(Endpoint *endpoint)
{
    const auto it = m_endpoints.constFind(endpoint);
    if (it == m_endpoints.cend())
        return;
    const QList<Consumer *> consumers = it->consumers; // dispatch may touch m_endpoints
    for (Consumer *consumer : consumers)
        dispatch(consumer->queue);
}

} // namespace cmq
