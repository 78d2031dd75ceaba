#pragma once
// The delivery engine: what happens to a message once it is in a queue. Consumers share a
// queue round-robin under each connection's prefetch window; a delivery awaits the ack of the
// connection it went to (scoped to the delivering queue); nack, the ack timeout, resend and a
// closed connection put deliveries back at the head of their queue in their original order.
// drop-head eviction makes room in a full queue. It never touches sockets or SQL itself.

#include <functional>
#include <memory>
#include <optional>

#include <QHash>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <QTimer>

#include "config/config.h"
#include "core/endpoint.h"
#include "core/message.h"
#include "core/queue.h"
#include "core/queuepager.h"
#include "core/refusal.h"
#include "storage/routerstore.h" // EntryMove
#include "util/result.h"

namespace cmq {

class Endpoint;
class LiveMessages;
class Topology;
struct RouterStats;
namespace storage {
class RouterStore;
struct QueueEntry;
struct DeadLetterEntry;
struct QueueBacklog;
} // namespace storage
// How `ready` goes out as its next delivery (the "Redelivered:" and "Meta:" facts).
DeliveryFacts nextDeliveryFacts(const ReadyMessage &ready, bool withMeta);

namespace limits {
class Clock;
}

class DeliveryEngine final : public QObject
{
    Q_DISABLE_COPY_MOVE(DeliveryEngine)

public:
    // Messages the background expiry sweep drops per second at most, over all queues.
    static constexpr qint64 ExpirySweepBudget = 10000;

    // `clock` (null: a steady clock of its own) times deliveries for the ack timeout.
    DeliveryEngine(Topology &topology, LiveMessages &live, storage::RouterStore &store,
                   RouterStats &stats, const Config::Performance &performance,
                   const limits::Clock *clock = nullptr, QObject *parent = nullptr);
    ~DeliveryEngine() override;

    // Start-up: the stored queue entries, in order, as ready messages; with `backlogs`, those
    // entries are each queue's head and the rest stays in the database (core/queuepager.h).
    // The `uncounted` queues' heads filled the window: what is behind them is counted in the
    // background, and asked for here.
    void restore(const QList<storage::QueueEntry> &entries,
                 const QList<storage::QueueBacklog> &backlogs = {},
                 const QStringList &uncounted = {});

    // A committed message joins the back of `queue` (drop-head evicting to make room); the
    // caller dispatches once it has enqueued everything of its commit.
    void enqueue(Queue *queue, const MessagePtr &message);
    // A message enqueued before its commit, which did not store it, leaves `queue` if it is
    // still waiting there (nothing is recorded: storage has no row of it). True if it was.
    bool withdraw(Queue *queue, const QByteArray &messageId);
    // drop-head: evicts the oldest ready messages until `room` more messages of `roomBytes`
    // in all fit under the queue's length and byte limits.
    void evictForRoom(Queue *queue, qsizetype room, qint64 roomBytes);
    // Hands ready messages to consumers with room, round-robin, until either runs out.
    void dispatch(Queue *queue);

    // `withMeta`: each delivery goes out with its "Meta:" line (consume ... with-meta).
    Verdict consume(Endpoint *endpoint, const QString &queue, bool withMeta = false);
    // consume of a queue that does not exist yet: declares it (owned by `owner`), then
    // subscribes, unless the endpoint closed meanwhile (then `done` gets a failure and no
    // consumer is registered: it would outlive its connection).
    void declareAndConsume(Endpoint *endpoint, const QString &queue, const QString &owner,
                           bool withMeta, std::function<void(Verdict)> done);
    // The head of the queue, delivered to `endpoint` (awaiting its ack), if anything is ready.
    std::optional<ReadyMessage> fetch(Endpoint *endpoint, const QString &queue);
    Verdict ack(Endpoint *endpoint, const QByteArray &messageId);
    // True when `messageId` was delivered to this endpoint and awaits its ack or nack.
    bool awaitsAck(Endpoint *endpoint, const QByteArray &messageId) const;
    Verdict nack(Endpoint *endpoint, const QByteArray &messageId, bool requeue);
    void setPrefetch(Endpoint *endpoint, int prefetch);

    enum class ResendOutcome { Requested, Unauthorized, NotFound };
    ResendOutcome resend(const QString &requester, bool isAdmin, const QByteArray &messageId);

    bool isConsuming(Endpoint *endpoint) const;
    struct EndpointInfo
    {
        QStringList consumedQueues;
        int prefetch = 0;
        qsizetype unacked = 0;
    };
    EndpointInfo endpointInfo(Endpoint *endpoint) const;
    void endpointClosed(Endpoint *endpoint);
    void endpointWritable(Endpoint *endpoint);
    // Requeues the deliveries older than the ack timeout (run by a timer; public for tests).
    void expireUnacked();
    // Drops the ready messages past their TTL from the heads of the queues, at most
    // `budget` in all (run by a timer; public for tests). Returns how many.
    qint64 sweepExpired(qint64 budget);

    // Admin: sends up to `max` of the dead letters ready in `queue`'s window, or all of them
    // (0, the backlog's in the database too), back to the queues they came from, once stored
    // (core/deadlettering.cpp); `done` gets how many.
    void requeueDeadLetters(Queue *queue, qint64 max, std::function<void(Outcome<qint64>)> done);
    // Start-up, after restore(): the dead-letter records of the restored entries.
    void restoreDeadLetters(const QList<storage::DeadLetterEntry> &records);

    // Admin: drops the ready messages (deliveries awaiting an ack stay); returns how many.
    qint64 purgeReady(Queue *queue);
    // Admin: `queue` is going away: forgets its messages, deliveries and consumers.
    struct Forgotten
    {
        qint64 messagesDropped = 0;
        qint64 consumersCancelled = 0;
    };
    Forgotten forgetQueue(Queue *queue);

private:
    // The two halves of a requeue (core/deadlettering.cpp): the dead letters taken out of the
    // window, and those of the backlog, moved in the database only.
    void requeueWindowDeadLetters(Queue *queue, QList<ReadyMessage> moving,
                                  QList<storage::EntryMove> moves,
                                  std::function<void(Outcome<qint64>)> done);
    void requeueBacklogDeadLetters(Queue *queue, std::function<void(Outcome<qint64>)> done);
    struct EndpointState
    {
        int prefetch = 0;
        QList<Consumer *> consumers;
        QHash<QByteArray, QList<Queue *>> unacked; // message id → queues, oldest first
        QSet<quint64> pendingConsumes;             // declareAndConsume tickets still waiting
    };

    EndpointState &stateFor(Endpoint *endpoint);
    qint64 nowMs() const;
    // Records `ready` as delivered to `endpoint`; the caller hands it over.
    void deliver(Queue *queue, Endpoint *endpoint, Consumer *consumer, const ReadyMessage &ready);
    // Removes a delivery from every index; the caller decides where the message goes next.
    Delivery takeDelivery(Queue *queue, const QByteArray &messageId);
    // The queue a delivery to `endpoint` came from; null when it awaits no ack from it.
    Queue *awaitingQueue(Endpoint *endpoint, const QByteArray &messageId) const;
    void requeueFront(Queue *queue, QList<Delivery> deliveries);
    // Takes the head of the ready messages out for good (evicted or expired: stored alike,
    // or dead-lettered when the queue asks for it).
    MessagePtr dropReadyHead(Queue *queue, DeadLetterReason reason);
    // Dead-lettering (core/deadlettering.cpp). True when `queue` sends messages it gives up on
    // for `reason` to its dead-letter exchange.
    bool deadLetters(const Queue &queue, const ReadyMessage &message,
                     DeadLetterReason reason) const;
    // A message that has left `queue` (out of its lists, bytes uncounted, still held) goes to
    // the queues its dead-letter exchange routes it to, or is dropped when none takes it.
    void deadLetter(Queue *queue, ReadyMessage message, DeadLetterReason reason);
    // While one is open, dead-letter moves wait and go to storage together, as one transaction,
    // when the outermost closes (an expiry sweep or an eviction giving up on many at once);
    // closed before control returns to the event loop.
    class DeadLetterBatch
    {
        Q_DISABLE_COPY_MOVE(DeadLetterBatch)
    public:
        explicit DeadLetterBatch(DeliveryEngine &engine) : m_engine(engine)
        {
            ++m_engine.m_deadLetterBatchDepth;
        }
        ~DeadLetterBatch();

    private:
        DeliveryEngine &m_engine;
    };
    // Sends one dead letter's move, or keeps it for the open batch.
    void moveDeadLetter(storage::EntryMove move, std::function<void(Status)> done);
    // Gives up on a message that has left `queue`: dead-lettered if asked, else dropped.
    void giveUp(Queue *queue, ReadyMessage message, DeadLetterReason reason);
    // Appends to `queue` (drop-head evicting to make room), held from now on.
    void append(Queue *queue, ReadyMessage message);
    // Drops the expired messages at the head of the queue, at most `budget`; returns how many
    // (core/expiry.cpp).
    qint64 dropExpiredHead(Queue *queue, qint64 nowMs, qint64 budget);

    Topology &m_topology;
    LiveMessages &m_live;
    QueuePager m_pager;
    storage::RouterStore &m_store;
    RouterStats &m_stats;
    Config::Performance m_performance;
    std::unique_ptr<limits::Clock> m_ownClock;
    const limits::Clock &m_clock;
    QHash<Endpoint *, EndpointState> m_endpoints;
    int m_deadLetterBatchDepth = 0;
    QList<storage::EntryMove> m_batchedMoves;
    QList<std::function<void(Status)>> m_batchedMovesDone;
    QTimer m_ackTimeoutTimer;
    QTimer m_expiryTimer;
    quint64 m_deliverySeq = 0;
    quint64 m_consumeTicket = 0;
};

} // namespace cmq
