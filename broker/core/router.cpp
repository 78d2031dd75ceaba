#include "core/router.h"

#include "core/corelog.h"

namespace cmq {

Router::Router(storage::RouterStore &storage, const Config::Performance &performance,
               limits::MemoryBudget &memory, QObject *parent, const limits::Clock *clock)
    : QObject(parent), m_storage(storage), m_live(memory), m_topology(storage, performance),
      m_delivery(m_topology, m_live, storage, m_stats, performance, clock),
      m_publisher(m_topology, m_delivery, m_live, storage, memory, m_stats,
                  performance.deliverBeforeCommit)
{
}

Router::~Router() = default;

void Router::restore(const storage::RecoveredState &state)
{
    m_topology.restore(state);
    m_delivery.restore(state.entries, state.backlogs, state.uncounted);
    m_delivery.restoreDeadLetters(state.deadLetters);
    qint64 queued = 0;
    for (const Queue *queue : m_topology.queues())
        queued += queue->depth();
    qCInfo(lcRouter,
           "restored %lld exchanges, %lld queues, %lld bindings, %lld%s queued messages (%lld in "
           "memory)",
           qlonglong(state.exchanges.size()), qlonglong(state.queues.size()),
           qlonglong(state.bindings.size()), qlonglong(queued),
           state.uncounted.isEmpty() ? "" : " and more (counting)",
           qlonglong(state.entries.size()));
}

void Router::resend(const QString &requester, bool isAdmin, const QByteArray &messageId,
                    std::function<void(ResendOutcome)> done)
{
    const ResendOutcome held = m_delivery.resend(requester, isAdmin, messageId);
    if (held != ResendOutcome::NotFound)
        return done(held);
    // Not in memory: it may still wait in the database, behind a queue's window. Its ready
    // copies are on their way already; only the sender check is left to make.
    m_storage.senderOfQueued(messageId, [requester, isAdmin, done = std::move(done)](
                                            Result<std::optional<QString>> sender) {
        if (!sender || !sender.value())
            return done(ResendOutcome::NotFound);
        done(isAdmin || *sender.value() == requester ? ResendOutcome::Requested
                                                     : ResendOutcome::Unauthorized);
    });
}

void Router::setQueuePolicy(const QString &queue, qint64 maxLength, const QString &overflow,
                            Done done, qint64 messageTtlMs,
                            const DeadLetterPolicyChange &deadLetter)
{
    m_topology.setQueuePolicy(
        queue, maxLength, overflow, messageTtlMs,
        [this, done = std::move(done)](Verdict verdict, Queue *target) {
            if (target) {
                if (!target->rejectsWhenFull())
                    m_delivery.evictForRoom(target, 0, 0);
                const DeadLetterPolicy &dl = target->deadLetterPolicy();
                qCInfo(lcRouter,
                       "queue %s: max length %lld, overflow %s, message TTL %lld ms, dead-letter "
                       "exchange '%s' key '%s', delivery limit %lld%s",
                       qPrintable(target->name()), qlonglong(target->maxLength()),
                       qPrintable(target->overflow()), qlonglong(target->messageTtlMs()),
                       qPrintable(dl.exchange), qPrintable(dl.routingKey),
                       qlonglong(dl.deliveryLimit),
                       dl.onOverflow ? ", overflow dead-lettered" : "");
            }
            done(verdict);
        },
        deadLetter);
}

void Router::purgeQueue(const QString &name, std::function<void(Outcome<qint64>)> done)
{
    if (!m_topology.queue(name))
        return done(Refusal::queueNotFound(name));
    // Storage runs this after every publish issued before it, and hands results back in
    // order, so whatever is ready in memory when `done` runs is exactly what it deleted.
    m_storage.purgeQueue(name, [this, name, done = std::move(done)](Status status) {
        if (!status)
            return done(Outcome<qint64>::refusedBy(status));
        Queue *queue = m_topology.queue(name);
        if (!queue)
            return done(Refusal::queueNotFound(name));
        const qint64 purged = m_delivery.purgeReady(queue);
        qCInfo(lcRouter, "purged %lld ready messages from %s", qlonglong(purged), qPrintable(name));
        done(purged);
    });
}

void Router::deleteQueue(const QString &name, std::function<void(Outcome<DeleteOutcome>)> done)
{
    if (!m_topology.queue(name))
        return done(Refusal::queueNotFound(name));
    m_storage.deleteQueue(name, [this, name, done = std::move(done)](Status status) {
        if (!status)
            return done(Outcome<DeleteOutcome>::refusedBy(status));
        DeleteOutcome outcome;
        const std::unique_ptr<Queue> queue = m_topology.takeQueue(name, &outcome.bindingsRemoved);
        if (!queue)
            return done(Refusal::queueNotFound(name));
        const DeliveryEngine::Forgotten forgotten = m_delivery.forgetQueue(queue.get());
        outcome.messagesDropped = forgotten.messagesDropped;
        outcome.consumersCancelled = forgotten.consumersCancelled;
        qCInfo(lcRouter, "deleted queue %s: %lld messages, %lld consumers, %lld bindings",
               qPrintable(name), qlonglong(outcome.messagesDropped),
               qlonglong(outcome.consumersCancelled), qlonglong(outcome.bindingsRemoved));
        done(outcome);
    });
}

void Router::requeueDeadLetters(const QString &name, qint64 max,
                                std::function<void(Outcome<qint64>)> done)
{
    Queue *queue = m_topology.queue(name);
    if (!queue)
        return done(Refusal::queueNotFound(name));
    m_delivery.requeueDeadLetters(queue, max, std::move(done));
}

} // namespace cmq
