// Dead-lettering, part of the delivery engine: a queue with a dead-letter exchange sends the
// messages it gives up on (nack ... drop, expired, evicted by drop-head if it asks, past its
// delivery limit) there instead of dropping them. The dead letter is the same message (same
// id, same envelope bytes) with a record of why and where from; its entry moves from the queue
// to the dead-letter queues in one storage transaction, and joins them in memory once that has
// committed. Until then it is in neither (a crash before the commit leaves it where it was).
// An admin's requeue moves dead letters back the same way. docs/PROTOCOL.md, "Dead-lettering".

#include <algorithm>
#include <utility>

#include <QSet>

#include "core/corelog.h"
#include "core/deliveryengine.h"
#include "core/livemessages.h"
#include "core/router.h"
#include "core/topology.h"
#include "storage/storage.h"

namespace cmq {

namespace {

constexpr const char *reasonNames[DeadLetterReasonCount] = {"rejected", "expired", "overflow",
                                                            "delivery_limit"};

// Whether `queue` can take one more message now; a full reject-publish queue refuses dead
// letters as it refuses publishes (drop-head makes room instead).
bool hasRoomFor(const Queue &queue, const Message &message)
{
    if (!queue.rejectsWhenFull())
        return true;
    return queue.depth() + queue.inflight < queue.maxLength() &&
           (queue.maxBytes() == 0 ||
            queue.bytes() + queue.inflightBytes + message.envelope.size() <= queue.maxBytes());
}

bool holds(Queue &queue, const QByteArray &id)
{
    if (queue.unacked().contains(id))
        return true;
    return std::any_of(queue.ready().cbegin(), queue.ready().cend(),
                       [&id](const ReadyMessage &r) { return r.message->id == id; });
}

} // namespace

const char *deadLetterReasonName(DeadLetterReason reason)
{
    return reasonNames[int(reason)];
}

std::optional<DeadLetterReason> deadLetterReasonFromName(QStringView name)
{
    for (int i = 0; i < DeadLetterReasonCount; ++i) {
        if (name == QLatin1StringView(reasonNames[i]))
            return DeadLetterReason(i);
    }
    return std::nullopt;
}

bool DeliveryEngine::deadLetters(const Queue &queue, const ReadyMessage &message,
                                 DeadLetterReason reason) const
{
    const DeadLetterPolicy &policy = queue.deadLetterPolicy();
    if (!policy.enabled())
        return false;
    if (reason == DeadLetterReason::Overflow && !policy.onOverflow)
        return false;
    // A dead letter that expires or overflows again is dropped: with its publish time kept, a
    // cycle of dead-letter queues with TTLs (or all full) would otherwise pass it round for
    // ever. Rejections and delivery limits take a consumer each time.
    const bool passive =
        reason == DeadLetterReason::Expired || reason == DeadLetterReason::Overflow;
    return !(passive && message.deadLetter);
}

void DeliveryEngine::giveUp(Queue *queue, ReadyMessage message, DeadLetterReason reason)
{
    if (deadLetters(*queue, message, reason))
        return deadLetter(queue, std::move(message), reason);
    m_store.markEvicted(queue->name(), message.message->id);
    m_live.release(message.message->id);
}

void DeliveryEngine::deadLetter(Queue *queue, ReadyMessage taken, DeadLetterReason reason)
{
    const DeadLetterPolicy &policy = queue->deadLetterPolicy();
    const MessagePtr message = taken.message;
    const QString &key = policy.routingKey.isEmpty() ? message->routingKey : policy.routingKey;
    // Shared by every copy (docs: ready for the deliveries with metadata).
    const auto record = std::make_shared<const DeadLetterRecord>(DeadLetterRecord{
        reason, queue->name(), QDateTime::currentDateTimeUtc(), taken.deliveryCount});
    const bool heldElsewhere = m_live.queueCount(message->id) > 1;
    QStringList targets;
    for (Queue *target : m_topology.route(policy.exchange, key)) {
        // Never back into itself (it would come straight back for the same reason), never
        // past a reject-publish limit, never twice into a queue that holds it already.
        if (target == queue || !hasRoomFor(*target, *message) ||
            (heldElsewhere && holds(*target, message->id)))
            continue;
        targets.append(target->name());
    }
    if (targets.isEmpty()) {
        qCInfo(lcRouter, "dead letter %s from %s (%s) routed nowhere: dropped",
               message->id.constData(), qPrintable(queue->name()), deadLetterReasonName(reason));
        m_store.markEvicted(queue->name(), message->id);
        m_live.release(message->id);
        return;
    }
    storage::EntryMove move{queue->name(),
                            message->id,
                            targets,
                            QString::fromLatin1(deadLetterReasonName(reason)),
                            queue->name(),
                            record->at,
                            record->deliveryCount};
    const QString from = queue->name();
    moveDeadLetter(std::move(move), [this, message, record, targets, from](Status status) {
        if (!status) {
            // Still stored in its queue: it comes back there at the next start.
            qCWarning(lcRouter, "dead-lettering %s from %s failed: %s", message->id.constData(),
                      qPrintable(from), qPrintable(status.error()));
            m_live.release(message->id);
            return;
        }
        if (Queue *origin = m_topology.queue(from))
            ++origin->counters.deadLettered;
        ++m_stats.deadLettered[int(record->reason)];
        QList<Queue *> joined;
        for (const QString &name : targets) {
            if (Queue *target = m_topology.queue(name)) {
                append(target, ReadyMessage{message, false, 0, record});
                joined.append(target);
            }
        }
        m_live.release(message->id); // the original queue's hold
        qCDebug(lcRouter) << "dead-lettered" << message->id << "from" << from << "to" << targets;
        for (Queue *target : std::as_const(joined))
            dispatch(target);
    });
}

DeliveryEngine::DeadLetterBatch::~DeadLetterBatch()
{
    if (--m_engine.m_deadLetterBatchDepth > 0 || m_engine.m_batchedMoves.isEmpty())
        return;
    // One transaction for all: 500 expiring at once are one commit, not 500. Each message's
    // continuation runs in the order it was dead-lettered.
    QList<storage::EntryMove> moves = std::exchange(m_engine.m_batchedMoves, {});
    m_engine.m_store.moveEntries(
        std::move(moves), [done = std::exchange(m_engine.m_batchedMovesDone, {})](Status status) {
            for (const std::function<void(Status)> &each : done)
                each(status);
        });
}

void DeliveryEngine::moveDeadLetter(storage::EntryMove move, std::function<void(Status)> done)
{
    if (m_deadLetterBatchDepth == 0)
        return m_store.moveEntries({std::move(move)}, std::move(done));
    m_batchedMoves.append(std::move(move));
    m_batchedMovesDone.append(std::move(done));
}

void DeliveryEngine::append(Queue *queue, ReadyMessage message)
{
    if (!queue->rejectsWhenFull())
        evictForRoom(queue, 1, message.message->envelope.size());
    // Like a publish: behind a backlog in the database it joins the backlog (its record is read
    // back with its page), else the window.
    if (!m_pager.admitToWindow(queue, message.message->envelope.size()))
        return m_pager.addToBacklog(queue, *message.message);
    m_live.hold(queue, message.message);
    queue->ready().push_back(std::move(message));
}

void DeliveryEngine::requeueDeadLetters(Queue *queue, qint64 max,
                                        std::function<void(Outcome<qint64>)> done)
{
    // Out of the dead-letter queue now, so no consumer gets them meanwhile; in order.
    std::deque<ReadyMessage> kept;
    QList<ReadyMessage> moving;
    QList<storage::EntryMove> moves;
    for (ReadyMessage &ready : queue->ready()) {
        const bool take = (max <= 0 || moves.size() < max) && ready.deadLetter &&
                          ready.deadLetter->originalQueue != queue->name() &&
                          m_topology.queue(ready.deadLetter->originalQueue);
        if (!take) {
            kept.push_back(std::move(ready));
            continue;
        }
        moves.append(storage::EntryMove{
            queue->name(), ready.message->id, {ready.deadLetter->originalQueue}, {}, {}, {}, 0});
        queue->addBytes(-ready.message->envelope.size());
        moving.append(std::move(ready));
    }
    queue->ready() = std::move(kept);
    // All of them: those of the backlog too, moved in the database without paging them in.
    // Issued after the window's moves, so its result comes after theirs.
    if (max <= 0 && (queue->backlog.messages > 0 || queue->backlog.uncounted)) {
        auto windowResult = std::make_shared<Outcome<qint64>>(qint64(0));
        requeueWindowDeadLetters(queue, std::move(moving), std::move(moves),
                                 [windowResult](Outcome<qint64> r) { *windowResult = r; });
        return requeueBacklogDeadLetters(
            queue, [windowResult, done = std::move(done)](Outcome<qint64> backlog) {
                if (!*windowResult)
                    return done(*windowResult);
                if (!backlog)
                    return done(backlog);
                done(windowResult->value() + backlog.value());
            });
    }
    requeueWindowDeadLetters(queue, std::move(moving), std::move(moves), std::move(done));
}

void DeliveryEngine::requeueWindowDeadLetters(Queue *queue, QList<ReadyMessage> moving,
                                              QList<storage::EntryMove> moves,
                                              std::function<void(Outcome<qint64>)> done)
{
    if (moves.isEmpty())
        return done(qint64(0));
    const QString from = queue->name();
    m_store.moveEntries(moves, [this, moving, from, done = std::move(done)](Status status) {
        if (!status) {
            // Nothing moved: back to the head of the dead-letter queue, in their order.
            Queue *source = m_topology.queue(from);
            for (auto it = moving.crbegin(); it != moving.crend(); ++it) {
                if (source) {
                    source->addBytes(it->message->envelope.size());
                    source->ready().push_front(*it);
                } else {
                    m_live.release(it->message->id);
                }
            }
            return done(Outcome<qint64>::refusedBy(status));
        }
        QSet<Queue *> joined;
        for (const ReadyMessage &ready : moving) {
            if (Queue *target = m_topology.queue(ready.deadLetter->originalQueue)) {
                append(target, ReadyMessage{ready.message, false, 0, nullptr});
                joined.insert(target);
            }
            m_live.release(ready.message->id); // the dead-letter queue's hold
        }
        m_stats.deadLettersRequeued += quint64(moving.size());
        qCInfo(lcRouter, "requeued %lld dead letters from %s", qlonglong(moving.size()),
               qPrintable(from));
        for (Queue *target : std::as_const(joined))
            dispatch(target);
        if (Queue *source = m_topology.queue(from))
            dispatch(source); // what was behind them
        done(qint64(moving.size()));
    });
}

void DeliveryEngine::requeueBacklogDeadLetters(Queue *queue,
                                               std::function<void(Outcome<qint64>)> done)
{
    const QString from = queue->name();
    const quint64 ticket = m_pager.beginBacklogMove(queue);
    m_store.requeueBacklogDeadLetters(
        from, queue->backlog.afterEntryId, queue->backlog.fromMessageId,
        [this, from, ticket, done = std::move(done)](Result<QList<storage::RequeuedBacklog>> moved) {
            Queue *source = m_topology.queue(from);
            if (!moved) {
                if (source)
                    m_pager.endBacklogMove(source, ticket, 0, 0);
                return done(Outcome<qint64>::refusedBy(moved));
            }
            qint64 messages = 0;
            qint64 bytes = 0;
            for (const storage::RequeuedBacklog &target : moved.value()) {
                messages += target.messages;
                bytes += target.bytes;
                // Behind everything the original queue holds, paged in from there.
                if (Queue *original = m_topology.queue(target.queue))
                    m_pager.addToBacklog(original, target.messages, target.bytes,
                                         target.firstMessageId);
            }
            if (source)
                m_pager.endBacklogMove(source, ticket, messages, bytes);
            m_stats.deadLettersRequeued += quint64(messages);
            qCInfo(lcRouter, "requeued %lld dead letters of the backlog of %s",
                   qlonglong(messages), qPrintable(from));
            done(messages);
        });
}

void DeliveryEngine::restoreDeadLetters(const QList<storage::DeadLetterEntry> &records)
{
    if (records.isEmpty())
        return;
    QHash<QString, QHash<QByteArray, DeadLetterPtr>> byQueue;
    for (const storage::DeadLetterEntry &entry : records) {
        const auto reason = deadLetterReasonFromName(entry.reason);
        if (!reason)
            continue;
        byQueue[entry.queue].insert(
            entry.messageId,
            std::make_shared<const DeadLetterRecord>(DeadLetterRecord{
                *reason, entry.originalQueue, entry.at, int(entry.deliveryCount)}));
    }
    for (auto it = byQueue.cbegin(); it != byQueue.cend(); ++it) {
        Queue *queue = m_topology.queue(it.key());
        if (!queue)
            continue;
        for (ReadyMessage &ready : queue->ready())
            ready.deadLetter = it->value(ready.message->id);
    }
}

} // namespace cmq
