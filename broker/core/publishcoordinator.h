#pragma once
// The publish coordinator: one publish or publish_batch from receipt to outcome. Each message
// is checked against the messages the broker holds (dedupe), routed, admitted (queue limits
// under reject-publish, byte limits, the memory budget) and handed to the store's group
// commit; once committed it joins its queues through the delivery engine (with
// `deliverBeforeCommit`, as soon as it is handed to the store, and it leaves them again if the
// commit does not store it; the publisher's outcome waits for the commit either way). A
// message whose id
// is still being committed by another publish waits for that commit and gets its outcome:
// "Duplicate" only ever means committed.

#include <functional>
#include <memory>

#include <QHash>
#include <QList>
#include <QSet>
#include <QString>

#include "core/publishoutcome.h"

namespace cmq {

class DeliveryEngine;
class LiveMessages;
class Queue;
class Topology;
struct RouterStats;
namespace storage {
class RouterStore;
struct PublishResult;
} // namespace storage
namespace limits {
class MemoryBudget;
}

class PublishCoordinator
{
    Q_DISABLE_COPY_MOVE(PublishCoordinator)

public:
    PublishCoordinator(Topology &topology, DeliveryEngine &delivery, LiveMessages &live,
                       storage::RouterStore &store, limits::MemoryBudget &memory,
                       RouterStats &stats, bool deliverBeforeCommit = false);
    ~PublishCoordinator();

    struct Publication
    {
        QByteArray messageId;
        QByteArray envelope;
        qint64 ttlMs = 0; // the envelope's "ttl_ms"
    };
    // `done` gets one outcome per message, in order, once every message has one.
    void publish(const QString &sender, const QString &exchange, const QString &routingKey,
                 QList<Publication> messages, std::function<void(PublishOutcomes)> done);

private:
    struct Call; // one publish request waiting for its outcomes
    using CallPtr = std::shared_ptr<Call>;
    struct InflightWaiter
    {
        CallPtr call;
        qsizetype index = 0;
    };
    struct Pending; // a message handed to the store, with what enqueueing needs after it

    // deliverBeforeCommit: `pending` joins its queues now, before its commit.
    void enqueueAll(const QList<Pending> &pending);
    static void answer(const CallPtr &call, qsizetype index, PublishOutcome outcome);
    // Why `queues` cannot take a message of `bytes` now, or Stored when they can.
    PublishOutcome admission(const QList<Queue *> &queues, const QByteArray &id, qint64 bytes);
    void committed(const CallPtr &call, const QList<qsizetype> &indexes,
                   const QList<Pending> &pending, const QList<storage::PublishResult> &results);
    // Answers the publishes of an id that arrived while its commit was pending: as the commit.
    void settleWaiters(const QList<InflightWaiter> &waiters, const PublishOutcome &outcome);

    Topology &m_topology;
    DeliveryEngine &m_delivery;
    LiveMessages &m_live;
    storage::RouterStore &m_store;
    limits::MemoryBudget &m_memory;
    RouterStats &m_stats;
    const bool m_deliverBeforeCommit;
    // deliverBeforeCommit: delivered, but their commit failed, and still in a consumer's hands.
    // A publish of one of these ids is new, not "Duplicate" (which means committed).
    QSet<QByteArray> m_unstoredLive;
    void rememberUnstored(const QByteArray &id);
    // Published, commit pending → later publishes of the same id, answered with its outcome.
    QHash<QByteArray, QList<InflightWaiter>> m_inflight;
};

} // namespace cmq
