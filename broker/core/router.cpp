#include "core/router.h"

#include <algorithm>

#include <QLoggingCategory>

#include "core/endpoint.h"
#include "protocol/replies.h"

Q_LOGGING_CATEGORY(lcRouter, "ciphermq.router")

namespace cmq {

namespace reply = protocol::reply;

Router::Router(storage::Storage &storage, const Config::Performance &performance,
               limits::MemoryBudget &memory, QObject *parent)
    : QObject(parent), m_storage(storage), m_performance(performance), m_memory(memory)
{
    m_clock.start();
    // Check often enough that a delivery is requeued within ~10% of its timeout.
    const int intervalMs = std::clamp(performance.ackTimeoutSec * 100, 200, 5000);
    m_ackTimeoutTimer.setInterval(intervalMs);
    connect(&m_ackTimeoutTimer, &QTimer::timeout, this, &Router::expireUnacked);
    m_ackTimeoutTimer.start();
}

Router::~Router()
{
    for (EndpointState &state : m_endpoints)
        qDeleteAll(state.consumers);
    qDeleteAll(m_queues);
}

void Router::restore(const storage::RecoveredState &state)
{
    for (const storage::ExchangeRecord &e : state.exchanges) {
        m_exchanges.insert(e.name, ExchangeInfo{e.name, e.type, e.creator});
        ++m_holdings[e.creator].exchanges;
    }
    for (const storage::QueueRecord &q : state.queues) {
        addQueue(q.name, q.owner, effectiveMaxLength(q.maxLength),
                 q.overflow.isEmpty() ? m_performance.overflowPolicy : q.overflow);
    }
    for (const storage::BindingRecord &b : state.bindings) {
        m_bindings[b.exchange][b.routingKey].append(b.queue);
        if (const Queue *queue = m_queues.value(b.queue))
            ++m_holdings[queue->owner()].bindings;
    }

    // One Message object per id, shared by every queue it is waiting in.
    QHash<QByteArray, MessagePtr> messages;
    for (const storage::QueueEntry &entry : state.entries) {
        Queue *queue = m_queues.value(entry.queue);
        if (!queue)
            continue;
        MessagePtr &message = messages[entry.messageId];
        if (!message) {
            message = std::make_shared<const Message>(Message{entry.messageId, entry.sender,
                                                              entry.exchange, entry.routingKey,
                                                              entry.envelope, entry.sentTime});
        }
        queue->ready().push_back(ReadyMessage{message, entry.redelivered});
        holdLive(queue, message);
    }
    qCInfo(lcRouter, "restored %lld exchanges, %lld queues, %lld bindings, %lld queued messages",
           qlonglong(state.exchanges.size()), qlonglong(state.queues.size()),
           qlonglong(state.bindings.size()), qlonglong(state.entries.size()));
}

Queue *Router::addQueue(const QString &name, const QString &owner, qint64 maxLength,
                        const QString &overflow)
{
    Queue *&slot = m_queues[name];
    if (!slot) {
        slot = new Queue(name, owner, maxLength, m_performance.maxQueueBytes, overflow);
        ++m_holdings[owner].queues;
    }
    return slot;
}

Status Router::checkQuota(const QString &cn, int Holdings::*what, int limit, const char *noun) const
{
    // Counts what is committed; declares still in flight may pass it by a few.
    if (m_holdings.value(cn).*what < limit)
        return success();
    return failure(QStringLiteral("%1 quota of '%2' reached (%3 %4s)")
                       .arg(QLatin1StringView(noun), cn)
                       .arg(limit)
                       .arg(QLatin1StringView(noun).toString().toLower()));
}

void Router::declareExchange(const QString &name, const QString &creator, Done done)
{
    // Re-declaring is an idempotent success, whoever asks: the shared exchange of the existing
    // clients (CipherMQ_exchange) is declared by every receiver. The creator is recorded.
    if (m_exchanges.contains(name))
        return done(success());
    if (Status quota =
            checkQuota(creator, &Holdings::exchanges, m_performance.maxExchangesPerCn, "Exchange");
        !quota)
        return done(quota);
    const storage::ExchangeRecord record{name, QStringLiteral("direct"), creator};
    m_storage.saveExchange(record, [this, record, done = std::move(done)](Status status) {
        if (status && !m_exchanges.contains(record.name)) {
            m_exchanges.insert(record.name, ExchangeInfo{record.name, record.type, record.creator});
            ++m_holdings[record.creator].exchanges;
        }
        done(status);
    });
}

void Router::declareQueue(const QString &name, const QString &owner, Done done)
{
    if (m_queues.contains(name))
        return done(success());
    if (Status quota = checkQuota(owner, &Holdings::queues, m_performance.maxQueuesPerCn, "Queue");
        !quota)
        return done(quota);
    const storage::QueueRecord record{name, owner, m_performance.maxQueueSize,
                                      m_performance.overflowPolicy};
    m_storage.saveQueue(record, [this, record, done = std::move(done)](Status status) {
        if (status)
            addQueue(record.name, record.owner, record.maxLength, record.overflow);
        done(status);
    });
}

void Router::bind(const QString &queue, const QString &exchange, const QString &routingKey,
                  Done done)
{
    if (!m_queues.contains(queue))
        return done(failure(QStringLiteral("Queue '%1' not found").arg(queue)));
    if (!m_exchanges.contains(exchange))
        return done(failure(QStringLiteral("Exchange '%1' not found").arg(exchange)));
    if (m_bindings.value(exchange).value(routingKey).contains(queue))
        return done(success());
    if (Status quota = checkQuota(m_queues.value(queue)->owner(), &Holdings::bindings,
                                  m_performance.maxBindingsPerCn, "Binding");
        !quota)
        return done(quota);
    const storage::BindingRecord record{queue, exchange, routingKey};
    m_storage.saveBinding(record, [this, record, done = std::move(done)](Status status) {
        if (status) {
            QStringList &queues = m_bindings[record.exchange][record.routingKey];
            const Queue *target = m_queues.value(record.queue);
            if (!queues.contains(record.queue) && target) {
                queues.append(record.queue);
                ++m_holdings[target->owner()].bindings;
            }
        }
        done(status);
    });
}

void Router::setQueuePolicy(const QString &queue, qint64 maxLength, const QString &overflow,
                            Done done)
{
    const Queue *existing = m_queues.value(queue);
    if (!existing)
        return done(failure(QStringLiteral("Queue '%1' not found").arg(queue)));
    const storage::QueueRecord record{queue, existing->owner(), maxLength, overflow};
    m_storage.saveQueue(record, [this, record, done = std::move(done)](Status status) {
        Queue *target = m_queues.value(record.name);
        if (status && target) {
            target->setPolicy(effectiveMaxLength(record.maxLength), record.overflow);
            if (!target->rejectsWhenFull())
                evictForRoom(target, 0, 0);
            qCInfo(lcRouter, "queue %s: max length %lld, overflow %s", qPrintable(record.name),
                   qlonglong(target->maxLength()), qPrintable(record.overflow));
        }
        done(status);
    });
}

QList<storage::BindingRecord> Router::bindings() const
{
    QList<storage::BindingRecord> all;
    for (auto e = m_bindings.cbegin(); e != m_bindings.cend(); ++e) {
        for (auto k = e->cbegin(); k != e->cend(); ++k) {
            for (const QString &queue : *k)
                all.append(storage::BindingRecord{queue, e.key(), k.key()});
        }
    }
    return all;
}

QList<Queue *> Router::route(const QString &exchange, const QString &routingKey) const
{
    QList<Queue *> targets;
    const auto exchangeIt = m_bindings.constFind(exchange);
    if (exchangeIt == m_bindings.cend())
        return targets;
    const auto keyIt = exchangeIt->constFind(routingKey);
    if (keyIt == exchangeIt->cend())
        return targets;
    for (const QString &name : *keyIt) {
        if (Queue *queue = m_queues.value(name))
            targets.append(queue);
    }
    return targets;
}

QByteArray Router::refusal(const QByteArray &line, const QByteArray &messageId, bool batch) const
{
    // `line` is a full "Error: <text>\n" line; the batch form names the message at the end.
    if (!batch)
        return line;
    QByteArray text = line.mid(int(sizeof("Error: ")) - 1);
    text.chop(1);
    return reply::batchError(text, messageId);
}

void Router::answer(const PublishCallPtr &call, qsizetype index, QByteArray line)
{
    call->replies[index] = std::move(line);
    if (--call->unanswered == 0)
        call->done(call->replies.join());
}

void Router::settleWaiters(const QByteArray &id, QList<InflightWaiter> waiters,
                           const storage::PublishResult &result)
{
    for (const InflightWaiter &waiter : waiters) {
        QByteArray line;
        switch (result.outcome) {
        case storage::PublishOutcome::Stored:
            // Stored once, by the first: counted as the second copy of a known id it is.
            ++m_stats.duplicates;
            line = reply::ack(id);
            break;
        case storage::PublishOutcome::Duplicate:
            ++m_stats.duplicates;
            line = refusal(reply::duplicateMessage(id), id, waiter.call->batch);
            break;
        case storage::PublishOutcome::Failed:
            ++m_stats.rejected;
            line = refusal(reply::error(result.error.toUtf8()), id, waiter.call->batch);
            break;
        }
        answer(waiter.call, waiter.index, std::move(line));
    }
}

void Router::publish(const QString &sender, const QString &exchange, const QString &routingKey,
                     QList<Publication> messages, bool batch, std::function<void(QByteArray)> done)
{
    const qsizetype count = messages.size();
    auto call = std::make_shared<PublishCall>();
    call->replies.resize(count);
    call->unanswered = count;
    call->batch = batch;
    call->done = std::move(done);
    if (count == 0)
        return call->done({});
    QList<storage::MessageRecord> records;
    QList<qsizetype> recordIndex; // record → position in `messages`
    const QList<Queue *> targets = route(exchange, routingKey);
    const QDateTime now = QDateTime::currentDateTimeUtc();

    for (qsizetype i = 0; i < count; ++i) {
        const QByteArray &id = messages[i].messageId;
        if (m_live.contains(id)) {
            ++m_stats.duplicates;
            answer(call, i, refusal(reply::duplicateMessage(id), id, batch));
            continue;
        }
        if (const auto inflight = m_inflight.find(id); inflight != m_inflight.end()) {
            // Typically a client that lost its connection resending: it learns the outcome of
            // the first commit, not a "Duplicate" that would make it drop the message.
            inflight->append(InflightWaiter{call, i});
            continue;
        }
        if (targets.isEmpty()) {
            ++m_stats.unroutable;
            answer(
                call, i,
                refusal(reply::noQueuesBound(exchange.toUtf8(), routingKey.toUtf8()), id, batch));
            continue;
        }
        const qint64 bytes = messages[i].envelope.size();
        if (const QString why = admissionRefusal(targets, id, bytes); !why.isEmpty()) {
            ++m_stats.rejected;
            answer(call, i, refusal(reply::error(why.toUtf8()), id, batch));
            continue;
        }
        storage::MessageRecord record;
        record.messageId = id;
        record.sender = sender;
        record.exchange = exchange;
        record.routingKey = routingKey;
        record.envelope = std::move(messages[i].envelope);
        record.sentTime = now;
        for (Queue *queue : targets) {
            record.queues.append(queue->name());
            ++queue->inflight;
            queue->inflightBytes += bytes;
        }
        m_memory.addMessageBytes(bytes); // held by the storage worker until the commit
        m_inflight.insert(id, {});
        records.append(std::move(record));
        recordIndex.append(i);
    }

    if (records.isEmpty())
        return; // answered, or waiting on other requests' commits

    // Keep what enqueueing needs after the commit; the records themselves move to storage.
    struct Pending
    {
        MessagePtr message;
        QStringList queues;
    };
    QList<Pending> pending;
    pending.reserve(records.size());
    for (const storage::MessageRecord &r : records) {
        pending.append(
            Pending{std::make_shared<const Message>(Message{r.messageId, r.sender, r.exchange,
                                                            r.routingKey, r.envelope, r.sentTime}),
                    r.queues});
    }

    m_storage.publish(
        std::move(records), [this, call, recordIndex = std::move(recordIndex),
                             pending = std::move(pending)](QList<storage::PublishResult> results) {
            QSet<Queue *> touched;
            for (qsizetype r = 0; r < pending.size(); ++r) {
                const Pending &p = pending[r];
                const QByteArray &id = p.message->id;
                QList<InflightWaiter> waiters = m_inflight.take(id);
                const qint64 bytes = p.message->envelope.size();
                QList<Queue *> queues;
                for (const QString &name : p.queues) {
                    if (Queue *queue = m_queues.value(name)) {
                        --queue->inflight;
                        queue->inflightBytes -= bytes;
                        queues.append(queue);
                    }
                }
                const storage::PublishResult result =
                    r < results.size() ? results[r] : storage::PublishResult{};
                QByteArray line;
                switch (result.outcome) {
                case storage::PublishOutcome::Stored:
                    ++m_stats.published;
                    for (Queue *queue : queues) {
                        enqueue(queue, p.message, false);
                        touched.insert(queue);
                    }
                    line = reply::ack(id);
                    break;
                case storage::PublishOutcome::Duplicate:
                    ++m_stats.duplicates;
                    line = refusal(reply::duplicateMessage(id), id, call->batch);
                    break;
                case storage::PublishOutcome::Failed:
                    ++m_stats.rejected;
                    line = refusal(reply::error(result.error.toUtf8()), id, call->batch);
                    break;
                }
                answer(call, recordIndex[r], std::move(line));
                settleWaiters(id, std::move(waiters), result);
                // After enqueue counted it as held, so the total never dips in between.
                m_memory.addMessageBytes(-bytes);
            }
            for (Queue *queue : touched)
                dispatch(queue);
        });
}

void Router::enqueue(Queue *queue, const MessagePtr &message, bool redelivered)
{
    // drop-head: make room by evicting the oldest ready message (as the seed did, but counted
    // and recorded). Unacked deliveries are never evicted: they are in a consumer's hands.
    if (!queue->rejectsWhenFull())
        evictForRoom(queue, 1, message->envelope.size());
    queue->ready().push_back(ReadyMessage{message, redelivered});
    ++queue->publishedTotal;
    holdLive(queue, message);
}

void Router::holdLive(Queue *queue, const MessagePtr &message)
{
    const qint64 bytes = message->envelope.size();
    queue->addBytes(bytes);
    LiveMessage &live = m_live[message->id];
    if (live.queueRefs++ == 0) {
        live.sender = message->sender;
        live.bytes = bytes;
        m_memory.addMessageBytes(bytes);
    }
}

QString Router::admissionRefusal(const QList<Queue *> &queues, const QByteArray &id, qint64 bytes)
{
    const QString message = QString::fromUtf8(id);
    for (const Queue *q : queues) {
        // Evicting everything else would not make room: refused under either policy rather
        // than dropped.
        if (q->maxBytes() > 0 && bytes > q->maxBytes()) {
            return QStringLiteral("Message %1 of %2 bytes exceeds queue '%3' byte limit (%4 "
                                  "bytes, performance.max_queue_bytes)")
                .arg(message)
                .arg(bytes)
                .arg(q->name())
                .arg(q->maxBytes());
        }
        if (!q->rejectsWhenFull())
            continue;
        if (q->depth() + q->inflight >= q->maxLength()) {
            return QStringLiteral("Queue '%1' is full (%2 messages, overflow reject-publish): "
                                  "message %3 rejected")
                .arg(q->name())
                .arg(q->maxLength())
                .arg(message);
        }
        if (q->maxBytes() > 0 && q->bytes() + q->inflightBytes + bytes > q->maxBytes()) {
            return QStringLiteral("Queue '%1' is full (%2 bytes, overflow reject-publish): "
                                  "message %3 rejected")
                .arg(q->name())
                .arg(q->maxBytes())
                .arg(message);
        }
    }
    using limits::mebibytes;
    switch (m_memory.admit(bytes)) {
    case limits::MemoryBudget::Admission::Admitted:
        return {};
    case limits::MemoryBudget::Admission::Alarm:
        return QStringLiteral("Memory alarm: the broker holds %1 MiB of its %2 MiB budget "
                              "(performance.memory_budget_mb): message %3 rejected")
            .arg(mebibytes(m_memory.used()), mebibytes(m_memory.budget()), message);
    case limits::MemoryBudget::Admission::DoesNotFit:
        break;
    }
    return QStringLiteral("Message %1 of %2 bytes does not fit in the broker's memory budget "
                          "(%3 MiB of %4 MiB held, performance.memory_budget_mb)")
        .arg(message)
        .arg(bytes)
        .arg(mebibytes(m_memory.used()), mebibytes(m_memory.budget()));
}

void Router::evictForRoom(Queue *queue, qsizetype room, qint64 roomBytes)
{
    const auto overLimit = [queue, room, roomBytes] {
        return queue->depth() + room > queue->maxLength() ||
               (queue->maxBytes() > 0 && queue->bytes() + roomBytes > queue->maxBytes());
    };
    while (overLimit() && !queue->ready().empty()) {
        const MessagePtr evicted = queue->ready().front().message;
        queue->ready().pop_front();
        queue->addBytes(-evicted->envelope.size());
        ++queue->evictedTotal;
        ++m_stats.evicted;
        m_storage.markEvicted(queue->name(), evicted->id);
        releaseLive(evicted->id);
        qCDebug(lcRouter) << "evicted" << evicted->id << "from full queue" << queue->name();
    }
}

void Router::releaseLive(const QByteArray &messageId)
{
    auto it = m_live.find(messageId);
    if (it != m_live.end() && --it->queueRefs <= 0) {
        m_memory.addMessageBytes(-it->bytes);
        m_live.erase(it);
    }
}

void Router::dispatch(Queue *queue)
{
    while (!queue->ready().empty()) {
        Consumer *consumer = queue->nextConsumer();
        if (!consumer)
            return;
        ReadyMessage next = std::move(queue->ready().front());
        queue->ready().pop_front();
        consumer->endpoint->pushDelivery(
            deliver(queue, consumer->endpoint, consumer, std::move(next)));
    }
}

QByteArray Router::deliver(Queue *queue, Endpoint *endpoint, Consumer *consumer, ReadyMessage ready)
{
    const QByteArray &id = ready.message->id;
    Delivery delivery;
    delivery.message = ready.message;
    delivery.endpoint = endpoint;
    delivery.consumer = consumer;
    delivery.deliveredAtMs = m_clock.elapsed();
    delivery.redelivered = ready.redelivered;
    delivery.seq = ++m_deliverySeq;
    queue->unacked().insert(id, delivery);
    stateFor(endpoint).unacked[id].append(queue);
    if (consumer)
        ++consumer->unacked;
    ++queue->deliveredTotal;
    ++m_stats.delivered;
    if (ready.redelivered) {
        ++queue->redeliveredTotal;
        ++m_stats.redelivered;
    }
    m_storage.markDelivered(queue->name(), id);

    QByteArray lines;
    if (ready.redelivered)
        lines = reply::redelivered(id);
    lines += reply::message(id, ready.message->envelope);
    return lines;
}

Status Router::consume(Endpoint *endpoint, const QString &queueName)
{
    Queue *queue = m_queues.value(queueName);
    if (!queue)
        return failure(QStringLiteral("Queue '%1' not found").arg(queueName));
    EndpointState &state = stateFor(endpoint);
    for (Consumer *existing : std::as_const(state.consumers)) {
        if (existing->queue == queue)
            return success(); // already subscribed: idempotent
    }
    auto *consumer = new Consumer{endpoint, queue, state.prefetch, 0};
    state.consumers.append(consumer);
    queue->consumers().append(consumer);
    // Deliver what is waiting right away (no fixed delay as in the seed): the endpoint queues
    // these lines behind the "Subscribed to queue" reply, so order on the wire is kept.
    QMetaObject::invokeMethod(
        this,
        [this, queueName] {
            if (Queue *q = m_queues.value(queueName))
                dispatch(q);
        },
        Qt::QueuedConnection);
    return success();
}

void Router::declareAndConsume(Endpoint *endpoint, const QString &queue, const QString &owner,
                               Done done)
{
    // The ticket lives in the endpoint's state, which endpointClosed() erases: a declare that
    // commits after the close finds no ticket (even if a new connection reuses the address).
    const quint64 ticket = ++m_consumeTicket;
    stateFor(endpoint).pendingConsumes.insert(ticket);
    declareQueue(queue, owner, [this, endpoint, queue, ticket, done = std::move(done)](Status st) {
        const auto stateIt = m_endpoints.find(endpoint);
        const bool open = stateIt != m_endpoints.end() && stateIt->pendingConsumes.remove(ticket);
        if (!st)
            return done(st);
        if (!open)
            return done(failure(QStringLiteral("Connection closed before the subscription")));
        done(consume(endpoint, queue));
    });
}

QByteArray Router::fetch(Endpoint *endpoint, const QString &queueName)
{
    Queue *queue = m_queues.value(queueName);
    if (!queue || queue->ready().empty())
        return {};
    ReadyMessage next = std::move(queue->ready().front());
    queue->ready().pop_front();
    return deliver(queue, endpoint, nullptr, std::move(next));
}

Delivery Router::takeDelivery(Queue *queue, const QByteArray &messageId)
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

Status Router::ack(Endpoint *endpoint, const QByteArray &messageId)
{
    const auto stateIt = m_endpoints.constFind(endpoint);
    const QList<Queue *> queues =
        stateIt == m_endpoints.cend() ? QList<Queue *>{} : stateIt->unacked.value(messageId);
    if (queues.isEmpty()) {
        return failure(QStringLiteral("Message %1 is not awaiting acknowledgement from this "
                                      "connection")
                           .arg(QString::fromUtf8(messageId)));
    }
    Queue *queue = queues.first();
    const Delivery delivery = takeDelivery(queue, messageId);
    queue->addBytes(-delivery.message->envelope.size());
    ++queue->acknowledgedTotal;
    ++m_stats.acknowledged;
    m_storage.markAcknowledged(queue->name(), messageId);
    releaseLive(messageId);
    dispatch(queue); // prefetch room freed
    return success();
}

bool Router::awaitsAck(Endpoint *endpoint, const QByteArray &messageId) const
{
    const auto stateIt = m_endpoints.constFind(endpoint);
    return stateIt != m_endpoints.cend() && stateIt->unacked.contains(messageId);
}

Status Router::nack(Endpoint *endpoint, const QByteArray &messageId, bool requeue)
{
    const auto stateIt = m_endpoints.constFind(endpoint);
    const QList<Queue *> queues =
        stateIt == m_endpoints.cend() ? QList<Queue *>{} : stateIt->unacked.value(messageId);
    if (queues.isEmpty()) {
        return failure(QStringLiteral("Message %1 is not awaiting acknowledgement from this "
                                      "connection")
                           .arg(QString::fromUtf8(messageId)));
    }
    Queue *queue = queues.first();
    Delivery delivery = takeDelivery(queue, messageId);
    if (requeue) {
        requeueFront(queue, {delivery});
    } else {
        ++m_stats.nackDropped;
        queue->addBytes(-delivery.message->envelope.size());
        m_storage.markEvicted(queue->name(), messageId);
        releaseLive(messageId);
    }
    dispatch(queue);
    return success();
}

void Router::requeueFront(Queue *queue, QList<Delivery> deliveries)
{
    // Newest first onto the front, so the oldest ends up first: original order is kept.
    std::sort(deliveries.begin(), deliveries.end(),
              [](const Delivery &a, const Delivery &b) { return a.seq > b.seq; });
    for (const Delivery &d : deliveries)
        queue->ready().push_front(ReadyMessage{d.message, true});
}

void Router::setPrefetch(Endpoint *endpoint, int prefetch)
{
    EndpointState &state = stateFor(endpoint);
    state.prefetch = prefetch;
    for (Consumer *consumer : state.consumers)
        consumer->prefetch = prefetch;
    endpointWritable(endpoint); // a larger window may allow more deliveries now
}

Router::ResendOutcome Router::resend(const QString &requester, bool isAdmin,
                                     const QByteArray &messageId)
{
    const auto liveIt = m_live.constFind(messageId);
    if (liveIt == m_live.cend())
        return ResendOutcome::NotFound;
    if (!isAdmin && liveIt->sender != requester)
        return ResendOutcome::Unauthorized;
    // Deliveries still awaiting an ack go back to the head of their queue and out again;
    // messages not yet delivered are already on their way.
    for (Queue *queue : std::as_const(m_queues)) {
        if (!queue->unacked().contains(messageId))
            continue;
        requeueFront(queue, {takeDelivery(queue, messageId)});
        dispatch(queue);
    }
    return ResendOutcome::Requested;
}

Router::EndpointState &Router::stateFor(Endpoint *endpoint)
{
    auto it = m_endpoints.find(endpoint);
    if (it == m_endpoints.end())
        it = m_endpoints.insert(endpoint, EndpointState{m_performance.defaultPrefetch, {}, {}, {}});
    return *it;
}

bool Router::isConsuming(Endpoint *endpoint) const
{
    const auto it = m_endpoints.constFind(endpoint);
    return it != m_endpoints.cend() && !it->consumers.isEmpty();
}

Router::EndpointInfo Router::endpointInfo(Endpoint *endpoint) const
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

void Router::purgeQueue(const QString &name, std::function<void(Result<qint64>)> done)
{
    if (!m_queues.contains(name))
        return done(Result<qint64>::failure(QStringLiteral("Queue '%1' not found").arg(name)));
    // Storage runs this after every publish issued before it, and hands results back in
    // order, so whatever is ready in memory when `done` runs is exactly what it deleted.
    m_storage.purgeQueue(name, [this, name, done = std::move(done)](Status status) {
        if (!status)
            return done(Result<qint64>::failure(status.error()));
        Queue *queue = m_queues.value(name);
        if (!queue)
            return done(Result<qint64>::failure(QStringLiteral("Queue '%1' not found").arg(name)));
        const qint64 purged = queue->readyCount();
        for (const ReadyMessage &ready : queue->ready()) {
            queue->addBytes(-ready.message->envelope.size());
            releaseLive(ready.message->id);
        }
        queue->ready().clear();
        qCInfo(lcRouter, "purged %lld ready messages from %s", qlonglong(purged), qPrintable(name));
        done(purged);
    });
}

void Router::deleteQueue(const QString &name, std::function<void(Result<DeleteOutcome>)> done)
{
    using R = Result<DeleteOutcome>;
    if (!m_queues.contains(name))
        return done(R::failure(QStringLiteral("Queue '%1' not found").arg(name)));
    m_storage.deleteQueue(name, [this, name, done = std::move(done)](Status status) {
        if (!status)
            return done(R::failure(status.error()));
        Queue *queue = m_queues.take(name);
        if (!queue)
            return done(R::failure(QStringLiteral("Queue '%1' not found").arg(name)));
        DeleteOutcome outcome;
        // Bindings that point at it.
        for (auto e = m_bindings.begin(); e != m_bindings.end();) {
            for (auto k = e->begin(); k != e->end();) {
                outcome.bindingsRemoved += k->removeAll(name);
                k = k->isEmpty() ? e->erase(k) : std::next(k);
            }
            e = e->isEmpty() ? m_bindings.erase(e) : std::next(e);
        }
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
            releaseLive(it.key());
            ++outcome.messagesDropped;
        }
        for (const ReadyMessage &ready : queue->ready()) {
            releaseLive(ready.message->id);
            ++outcome.messagesDropped;
        }
        for (Consumer *consumer : std::as_const(queue->consumers())) {
            auto stateIt = m_endpoints.find(consumer->endpoint);
            if (stateIt != m_endpoints.end())
                stateIt->consumers.removeOne(consumer);
            delete consumer;
            ++outcome.consumersCancelled;
        }
        Holdings &holdings = m_holdings[queue->owner()];
        --holdings.queues;
        holdings.bindings -= int(outcome.bindingsRemoved);
        delete queue;
        qCInfo(lcRouter, "deleted queue %s: %lld messages, %lld consumers, %lld bindings",
               qPrintable(name), qlonglong(outcome.messagesDropped),
               qlonglong(outcome.consumersCancelled), qlonglong(outcome.bindingsRemoved));
        done(outcome);
    });
}

void Router::endpointClosed(Endpoint *endpoint)
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

void Router::endpointWritable(Endpoint *endpoint)
{
    const auto it = m_endpoints.constFind(endpoint);
    if (it == m_endpoints.cend())
        return;
    const QList<Consumer *> consumers = it->consumers; // dispatch may touch m_endpoints
    for (Consumer *consumer : consumers)
        dispatch(consumer->queue);
}

void Router::expireUnacked()
{
    const qint64 limitMs = qint64(m_performance.ackTimeoutSec) * 1000;
    const qint64 now = m_clock.elapsed();
    for (Queue *queue : std::as_const(m_queues)) {
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
