#include "core/publishcoordinator.h"

#include <QSet>

#include "core/deliveryengine.h"
#include "core/livemessages.h"
#include "core/router.h"
#include "core/topology.h"
#include "limits/memorybudget.h"
#include "storage/storage.h"

namespace cmq {

using Kind = PublishOutcome::Kind;

struct PublishCoordinator::Call
{
    PublishOutcomes outcomes;
    qsizetype unanswered = 0;
    std::function<void(PublishOutcomes)> done;
};

struct PublishCoordinator::Pending
{
    MessagePtr message;
    QStringList queues;
};

PublishCoordinator::PublishCoordinator(Topology &topology, DeliveryEngine &delivery,
                                       LiveMessages &live, storage::RouterStore &store,
                                       limits::MemoryBudget &memory, RouterStats &stats,
                                       bool deliverBeforeCommit)
    : m_topology(topology), m_delivery(delivery), m_live(live), m_store(store), m_memory(memory),
      m_stats(stats), m_deliverBeforeCommit(deliverBeforeCommit)
{
}

PublishCoordinator::~PublishCoordinator() = default;

static PublishOutcome commitOutcome(const QByteArray &id, const storage::PublishResult &result)
{
    switch (result.outcome) {
    case storage::PublishOutcome::Stored:
        return {.kind = Kind::Stored, .messageId = id};
    case storage::PublishOutcome::Duplicate:
        return {.kind = Kind::Duplicate, .messageId = id};
    case storage::PublishOutcome::Failed:
        break;
    }
    return {.kind = Kind::StorageFailed, .messageId = id, .reason = result.error};
}

void PublishCoordinator::answer(const CallPtr &call, qsizetype index, PublishOutcome outcome)
{
    call->outcomes[index] = std::move(outcome);
    if (--call->unanswered == 0)
        call->done(std::move(call->outcomes));
}

void PublishCoordinator::publish(const QString &sender, const QString &exchange,
                                 const QString &routingKey, QList<Publication> messages,
                                 std::function<void(PublishOutcomes)> done)
{
    const qsizetype count = messages.size();
    auto call = std::make_shared<Call>();
    call->outcomes.resize(count);
    call->unanswered = count;
    call->done = std::move(done);
    if (count == 0)
        return call->done({});
    QList<storage::MessageRecord> records;
    QList<qsizetype> recordIndex; // record → position in `messages`
    QList<qint64> recordTtl;      // record → the envelope's ttl_ms
    const QList<Queue *> targets = m_topology.route(exchange, routingKey);
    const QDateTime now = QDateTime::currentDateTimeUtc();

    for (qsizetype i = 0; i < count; ++i) {
        const QByteArray &id = messages[i].messageId;
        if (const auto inflight = m_inflight.find(id); inflight != m_inflight.end()) {
            // Typically a client that lost its connection resending: it learns the outcome of
            // the first commit, not a "Duplicate" that would make it drop the message. Checked
            // first: a message delivered before its commit is live already.
            inflight->append(InflightWaiter{call, i});
            continue;
        }
        if (m_live.contains(id) && !m_unstoredLive.contains(id)) {
            ++m_stats.duplicates;
            answer(call, i, PublishOutcome{.kind = Kind::Duplicate, .messageId = id});
            continue;
        }
        if (targets.isEmpty()) {
            ++m_stats.unroutable;
            answer(call, i, PublishOutcome{.kind = Kind::Unroutable, .messageId = id});
            continue;
        }
        const qint64 bytes = messages[i].envelope.size();
        if (PublishOutcome refused = admission(targets, id, bytes); !refused.stored()) {
            ++m_stats.rejected;
            answer(call, i, std::move(refused));
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
            if (m_deliverBeforeCommit)
                continue; // in the queue from the start: counted in its depth and bytes
            ++queue->inflight;
            queue->inflightBytes += bytes;
        }
        m_memory.addMessageBytes(bytes); // held by the storage worker until the commit
        m_inflight.insert(id, {});
        m_unstoredLive.remove(id);
        records.append(std::move(record));
        recordIndex.append(i);
        recordTtl.append(messages[i].ttlMs);
    }

    if (records.isEmpty())
        return; // answered, or waiting on other requests' commits

    // Keep what enqueueing needs after the commit; the records themselves move to storage.
    QList<Pending> pending;
    pending.reserve(records.size());
    for (qsizetype r = 0; r < records.size(); ++r) {
        const storage::MessageRecord &m = records[r];
        pending.append(Pending{
            std::make_shared<const Message>(Message{m.messageId, m.sender, m.exchange, m.routingKey,
                                                    m.envelope, m.sentTime, recordTtl[r]}),
            m.queues});
    }
    // Before enqueueing: a delivery update the enqueue causes (an eviction) is then ordered
    // after this publish by the store.
    const QList<Pending> early = m_deliverBeforeCommit ? pending : QList<Pending>{};
    m_store.publish(std::move(records),
                    [this, call, recordIndex = std::move(recordIndex),
                     pending = std::move(pending)](QList<storage::PublishResult> results) {
                        committed(call, recordIndex, pending, results);
                    });
    if (!early.isEmpty())
        enqueueAll(early);
}

void PublishCoordinator::enqueueAll(const QList<Pending> &pending)
{
    QSet<Queue *> touched;
    for (const Pending &p : pending) {
        for (const QString &name : p.queues) {
            if (Queue *queue = m_topology.queue(name)) {
                m_delivery.enqueue(queue, p.message);
                touched.insert(queue);
            }
        }
    }
    for (Queue *queue : touched)
        m_delivery.dispatch(queue);
}

void PublishCoordinator::committed(const CallPtr &call, const QList<qsizetype> &indexes,
                                   const QList<Pending> &pending,
                                   const QList<storage::PublishResult> &results)
{
    QSet<Queue *> touched;
    for (qsizetype r = 0; r < pending.size(); ++r) {
        const Pending &p = pending[r];
        const QByteArray &id = p.message->id;
        QList<InflightWaiter> waiters = m_inflight.take(id);
        const qint64 bytes = p.message->envelope.size();
        QList<Queue *> queues;
        for (const QString &name : p.queues) {
            if (Queue *queue = m_topology.queue(name)) {
                if (!m_deliverBeforeCommit) {
                    --queue->inflight;
                    queue->inflightBytes -= bytes;
                }
                queues.append(queue);
            }
        }
        const PublishOutcome outcome =
            commitOutcome(id, r < results.size() ? results[r] : storage::PublishResult{});
        if (outcome.stored()) {
            ++m_stats.routed;
            for (Queue *queue : m_deliverBeforeCommit ? QList<Queue *>{} : queues) {
                m_delivery.enqueue(queue, p.message);
                touched.insert(queue);
            }
        } else {
            // Delivered before its commit, which did not store it: still waiting in a queue it
            // is taken out (in a consumer's hands it stays; its ack then changes nothing).
            if (m_deliverBeforeCommit) {
                for (Queue *queue : queues)
                    m_delivery.withdraw(queue, id);
                if (outcome.kind == Kind::StorageFailed && m_live.contains(id))
                    rememberUnstored(id);
            }
            ++(outcome.kind == Kind::Duplicate ? m_stats.duplicates : m_stats.rejected);
        }
        answer(call, indexes[r], outcome);
        settleWaiters(waiters, outcome);
        // After enqueue counted it as held, so the total never dips in between.
        m_memory.addMessageBytes(-bytes);
    }
    for (Queue *queue : touched)
        m_delivery.dispatch(queue);
}

void PublishCoordinator::rememberUnstored(const QByteArray &id)
{
    // Bounded by what consumers hold: ids that have left every queue are dropped as it grows.
    if (m_unstoredLive.size() >= 1024) {
        for (auto it = m_unstoredLive.begin(); it != m_unstoredLive.end();)
            it = m_live.contains(*it) ? std::next(it) : m_unstoredLive.erase(it);
    }
    m_unstoredLive.insert(id);
}

void PublishCoordinator::settleWaiters(const QList<InflightWaiter> &waiters,
                                       const PublishOutcome &outcome)
{
    for (const InflightWaiter &waiter : waiters) {
        // Stored once, by the first: a waiter is counted as the second copy of a known id it is.
        ++(outcome.kind == Kind::StorageFailed ? m_stats.rejected : m_stats.duplicates);
        answer(waiter.call, waiter.index, outcome);
    }
}

PublishOutcome PublishCoordinator::admission(const QList<Queue *> &queues, const QByteArray &id,
                                             qint64 bytes)
{
    for (const Queue *q : queues) {
        // Evicting everything else would not make room: refused under either policy rather
        // than dropped.
        if (q->maxBytes() > 0 && bytes > q->maxBytes())
            return {.kind = Kind::TooLarge,
                    .messageId = id,
                    .queue = q->name(),
                    .bytes = bytes,
                    .limit = q->maxBytes()};
        if (!q->rejectsWhenFull())
            continue;
        if (q->depth() + q->inflight >= q->maxLength())
            return {.kind = Kind::QueueFull,
                    .messageId = id,
                    .queue = q->name(),
                    .limit = q->maxLength()};
        if (q->maxBytes() > 0 && q->bytes() + q->inflightBytes + bytes > q->maxBytes())
            return {.kind = Kind::QueueFull,
                    .messageId = id,
                    .queue = q->name(),
                    .limit = q->maxBytes(),
                    .inBytes = true};
    }
    switch (m_memory.admit(bytes)) {
    case limits::MemoryBudget::Admission::Admitted:
        break;
    case limits::MemoryBudget::Admission::Alarm:
        return {.kind = Kind::MemoryAlarm,
                .messageId = id,
                .bytes = bytes,
                .limit = m_memory.budget(),
                .held = m_memory.used()};
    case limits::MemoryBudget::Admission::DoesNotFit:
        return {.kind = Kind::MemoryAlarm,
                .messageId = id,
                .bytes = bytes,
                .limit = m_memory.budget(),
                .held = m_memory.used(),
                .doesNotFit = true};
    }
    return {.kind = Kind::Stored, .messageId = id};
}

} // namespace cmq
