#pragma once
// Exchanges, bindings and queues, and every rule of how a message moves between them: routing
// by exact routing key, group-committed publishing, round-robin delivery under prefetch,
// acknowledgement scoped to the delivering queue and connection, and redelivery when a
// connection goes away or an ack times out. It never touches sockets or SQL itself.

#include <functional>
#include <memory>

#include <QHash>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <QTimer>

#include "config/config.h"
#include "core/message.h"
#include "core/queue.h"
#include "limits/memorybudget.h"
#include "storage/storage.h"
#include "util/result.h"

namespace cmq {

class Endpoint;

struct ExchangeInfo
{
    QString name;
    QString type;
    QString creator;
};

struct RouterStats
{
    quint64 published = 0;  // messages committed
    quint64 unroutable = 0; // refused: no queue bound
    quint64 duplicates = 0; // refused: message id already known
    quint64 rejected = 0;   // refused: queue full, message over a byte limit, memory alarm,
                            // storage failed
    quint64 delivered = 0;
    quint64 redelivered = 0;
    quint64 acknowledged = 0;
    quint64 evicted = 0;
    quint64 nackDropped = 0;
    quint64 ackTimeouts = 0;
};

class Router final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Router)

public:
    // `memory` is told every message byte the router holds and asked before each publish.
    Router(storage::Storage &storage, const Config::Performance &performance,
           limits::MemoryBudget &memory, QObject *parent = nullptr);
    ~Router() override;

    // Start-up: rebuild topology and queued messages from the database.
    void restore(const storage::RecoveredState &state);

    using Done = std::function<void(Status)>;
    void declareExchange(const QString &name, const QString &creator, Done done);
    void declareQueue(const QString &name, const QString &owner, Done done);
    void bind(const QString &queue, const QString &exchange, const QString &routingKey, Done done);
    // The queue's own limit (0 = the configured default) and overflow policy, once stored. A
    // lower drop-head limit evicts the oldest ready messages at once.
    void setQueuePolicy(const QString &queue, qint64 maxLength, const QString &overflow, Done done);

    struct Publication
    {
        QByteArray messageId;
        QByteArray envelope;
    };
    // `done` receives the reply lines, one per message in order: "ACK <id>" or an error line
    // ("Error: <text>", or "Error: <text> for message <id>" when `batch`).
    void publish(const QString &sender, const QString &exchange, const QString &routingKey,
                 QList<Publication> messages, bool batch, std::function<void(QByteArray)> done);

    bool hasQueue(const QString &name) const { return m_queues.contains(name); }
    Status consume(Endpoint *endpoint, const QString &queue);
    // consume of a queue that does not exist yet: declares it (owned by `owner`), then
    // subscribes, unless the endpoint closed meanwhile (then `done` gets a failure and no
    // consumer is registered: it would outlive its connection).
    void declareAndConsume(Endpoint *endpoint, const QString &queue, const QString &owner,
                           Done done);
    // The delivery lines for the head of the queue, or empty when there is nothing ready.
    QByteArray fetch(Endpoint *endpoint, const QString &queue);
    Status ack(Endpoint *endpoint, const QByteArray &messageId);
    // True when `messageId` was delivered to this endpoint and awaits its ack or nack.
    bool awaitsAck(Endpoint *endpoint, const QByteArray &messageId) const;
    Status nack(Endpoint *endpoint, const QByteArray &messageId, bool requeue);
    void setPrefetch(Endpoint *endpoint, int prefetch);

    enum class ResendOutcome { Requested, Unauthorized, NotFound };
    ResendOutcome resend(const QString &requester, bool isAdmin, const QByteArray &messageId);

    bool isConsuming(Endpoint *endpoint) const;
    // What a connection consumes, for the admin views.
    struct EndpointInfo
    {
        QStringList consumedQueues;
        int prefetch = 0;
        qsizetype unacked = 0;
    };
    EndpointInfo endpointInfo(Endpoint *endpoint) const;
    void endpointClosed(Endpoint *endpoint);
    void endpointWritable(Endpoint *endpoint);

    // Read access for the admin views and metrics.
    const QHash<QString, Queue *> &queues() const { return m_queues; }
    const QHash<QString, ExchangeInfo> &exchanges() const { return m_exchanges; }
    QList<storage::BindingRecord> bindings() const;
    const RouterStats &stats() const { return m_stats; }

    // Admin actions. purgeQueue drops the ready messages (deliveries awaiting an ack stay with
    // their consumers) once the database has dropped the queue's entries; `done` gets how many.
    // deleteQueue drops the queue, its bindings, every message in it and its consumers, once
    // the database has. Both fail, changing nothing, when the queue does not exist or storage
    // fails.
    struct DeleteOutcome
    {
        qint64 messagesDropped = 0;
        qint64 consumersCancelled = 0;
        qint64 bindingsRemoved = 0;
    };
    void purgeQueue(const QString &name, std::function<void(Result<qint64>)> done);
    void deleteQueue(const QString &name, std::function<void(Result<DeleteOutcome>)> done);

private:
    struct EndpointState
    {
        int prefetch = 0;
        QList<Consumer *> consumers;
        QHash<QByteArray, QList<Queue *>> unacked; // message id → queues, oldest first
        QSet<quint64> pendingConsumes;             // declareAndConsume tickets still waiting
    };
    struct LiveMessage
    {
        QString sender;
        int queueRefs = 0;
        qint64 bytes = 0; // counted once in the memory budget, however many queues hold it
    };
    // One publish or publish_batch request: its reply lines, sent together once each message
    // has one. A message may wait on another request's commit of the same id.
    struct PublishCall
    {
        QList<QByteArray> replies;
        qsizetype unanswered = 0;
        bool batch = false;
        std::function<void(QByteArray)> done;
    };
    using PublishCallPtr = std::shared_ptr<PublishCall>;
    struct InflightWaiter
    {
        PublishCallPtr call;
        qsizetype index = 0;
    };

    EndpointState &stateFor(Endpoint *endpoint);
    Queue *addQueue(const QString &name, const QString &owner, qint64 maxLength,
                    const QString &overflow);
    // Why `queues` cannot take a message of `bytes` now (queue full under reject-publish, too
    // large for a queue's byte limit, the memory alarm), or an empty string when they can.
    QString admissionRefusal(const QList<Queue *> &queues, const QByteArray &id, qint64 bytes);
    // A stored max length of 0 means the configured default.
    qint64 effectiveMaxLength(qint64 stored) const
    {
        return stored > 0 ? stored : m_performance.maxQueueSize;
    }
    QList<Queue *> route(const QString &exchange, const QString &routingKey) const;
    QByteArray refusal(const QByteArray &text, const QByteArray &messageId, bool batch) const;
    static void answer(const PublishCallPtr &call, qsizetype index, QByteArray line);
    // Answers the publishes of `id` that arrived while its commit was pending: as the commit.
    void settleWaiters(const QByteArray &id, QList<InflightWaiter> waiters,
                       const storage::PublishResult &result);
    void enqueue(Queue *queue, const MessagePtr &message, bool redelivered);
    // Counts a message into a queue's bytes and, the first time it is held, the memory budget.
    void holdLive(Queue *queue, const MessagePtr &message);
    // drop-head: evicts the oldest ready messages until `room` more messages of `roomBytes`
    // in all fit under the queue's length and byte limits.
    void evictForRoom(Queue *queue, qsizetype room, qint64 roomBytes);
    void dispatch(Queue *queue);
    QByteArray deliver(Queue *queue, Endpoint *endpoint, Consumer *consumer, ReadyMessage ready);
    // Removes a delivery from every index; the caller decides where the message goes next.
    Delivery takeDelivery(Queue *queue, const QByteArray &messageId);
    void requeueFront(Queue *queue, QList<Delivery> deliveries);
    void releaseLive(const QByteArray &messageId);
    void expireUnacked();

    // What each CN holds, for its quotas (max_queues_per_cn and friends): queues it owns,
    // exchanges it created, bindings to its queues.
    struct Holdings
    {
        int queues = 0;
        int exchanges = 0;
        int bindings = 0;
    };
    Status checkQuota(const QString &cn, int Holdings::*what, int limit, const char *noun) const;

    storage::Storage &m_storage;
    Config::Performance m_performance;
    limits::MemoryBudget &m_memory;
    QHash<QString, Holdings> m_holdings;
    QHash<QString, ExchangeInfo> m_exchanges;
    // exchange → routing key → queue names
    QHash<QString, QHash<QString, QStringList>> m_bindings;
    QHash<QString, Queue *> m_queues;
    QHash<Endpoint *, EndpointState> m_endpoints;
    QHash<QByteArray, LiveMessage> m_live; // messages still in some queue, for dedupe and resend
    // Published, commit pending → later publishes of the same id, answered with its outcome
    // ("Duplicate" only ever means committed).
    QHash<QByteArray, QList<InflightWaiter>> m_inflight;
    QElapsedTimer m_clock;
    QTimer m_ackTimeoutTimer;
    quint64 m_deliverySeq = 0;
    quint64 m_consumeTicket = 0;
    RouterStats m_stats;
};

} // namespace cmq
