#pragma once
// Exchanges, bindings and queues, and every rule of how a message moves between them, as one
// facade over the parts that do the work (docs/ARCHITECTURE.md): the topology registry, the
// publish coordinator and the delivery engine. It never touches sockets or SQL itself; the
// parts reach storage only through storage::RouterStore.

#include <functional>

#include <QObject>

#include "config/config.h"
#include "core/deadletter.h"
#include "core/deliveryengine.h"
#include "core/livemessages.h"
#include "core/message.h"
#include "core/publishcoordinator.h"
#include "core/publishoutcome.h"
#include "core/queue.h"
#include "core/refusal.h"
#include "core/routerstats.h"
#include "core/topology.h"
#include "limits/memorybudget.h"
#include "storage/storage.h"
#include "util/result.h"

namespace cmq {

class Endpoint;

class Router final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Router)

public:
    // `memory` is told every message byte the router holds and asked before each publish.
    // `clock` (null: a steady clock) times deliveries for the ack timeout.
    Router(storage::RouterStore &storage, const Config::Performance &performance,
           limits::MemoryBudget &memory, QObject *parent = nullptr,
           const limits::Clock *clock = nullptr);
    ~Router() override;

    // Start-up: rebuild topology and queued messages from the database.
    void restore(const storage::RecoveredState &state);

    using Done = std::function<void(Verdict)>;
    void declareExchange(const QString &name, const QString &creator, Done done,
                         const ExchangeType &type = defaultExchangeType())
    {
        m_topology.declareExchange(name, creator, std::move(done), type);
    }
    void declareQueue(const QString &name, const QString &owner, Done done)
    {
        m_topology.declareQueue(name, owner, std::move(done));
    }
    void bind(const QString &queue, const QString &exchange, const QString &routingKey, Done done)
    {
        m_topology.bind(queue, exchange, routingKey, std::move(done));
    }
    // The queue's own limit (0 = the configured default), overflow policy and message TTL (0 =
    // none, negative = unchanged), once stored. A lower drop-head limit evicts the oldest ready
    // messages at once.
    // `deadLetter` changes what it names of the queue's dead-letter settings.
    void setQueuePolicy(const QString &queue, qint64 maxLength, const QString &overflow, Done done,
                        qint64 messageTtlMs = -1, const DeadLetterPolicyChange &deadLetter = {});

    using Publication = PublishCoordinator::Publication;
    // `done` receives one outcome per message, in order.
    void publish(const QString &sender, const QString &exchange, const QString &routingKey,
                 QList<Publication> messages, std::function<void(PublishOutcomes)> done)
    {
        m_publisher.publish(sender, exchange, routingKey, std::move(messages), std::move(done));
    }

    bool hasQueue(const QString &name) const { return m_topology.queue(name) != nullptr; }
    // `withMeta`: deliveries go out with their "Meta:" line (consume ... with-meta).
    Verdict consume(Endpoint *endpoint, const QString &queue, bool withMeta = false)
    {
        return m_delivery.consume(endpoint, queue, withMeta);
    }
    // consume of a queue that does not exist yet: declares it (owned by `owner`), then
    // subscribes, unless the endpoint closed meanwhile (then `done` gets a failure and no
    // consumer is registered: it would outlive its connection).
    void declareAndConsume(Endpoint *endpoint, const QString &queue, const QString &owner,
                           Done done, bool withMeta = false)
    {
        m_delivery.declareAndConsume(endpoint, queue, owner, withMeta, std::move(done));
    }
    // The head of the queue, delivered to `endpoint` (awaiting its ack), if anything is ready.
    std::optional<ReadyMessage> fetch(Endpoint *endpoint, const QString &queue)
    {
        return m_delivery.fetch(endpoint, queue);
    }
    Verdict ack(Endpoint *endpoint, const QByteArray &messageId)
    {
        return m_delivery.ack(endpoint, messageId);
    }
    // True when `messageId` was delivered to this endpoint and awaits its ack or nack.
    bool awaitsAck(Endpoint *endpoint, const QByteArray &messageId) const
    {
        return m_delivery.awaitsAck(endpoint, messageId);
    }
    Verdict nack(Endpoint *endpoint, const QByteArray &messageId, bool requeue)
    {
        return m_delivery.nack(endpoint, messageId, requeue);
    }
    void setPrefetch(Endpoint *endpoint, int prefetch)
    {
        m_delivery.setPrefetch(endpoint, prefetch);
    }

    using ResendOutcome = DeliveryEngine::ResendOutcome;
    ResendOutcome resend(const QString &requester, bool isAdmin, const QByteArray &messageId)
    {
        return m_delivery.resend(requester, isAdmin, messageId);
    }
    // As above, and for a message in no queue's window, asks storage whether a queue holds it.
    void resend(const QString &requester, bool isAdmin, const QByteArray &messageId,
                std::function<void(ResendOutcome)> done);

    bool isConsuming(Endpoint *endpoint) const { return m_delivery.isConsuming(endpoint); }
    // What a connection consumes, for the admin views.
    using EndpointInfo = DeliveryEngine::EndpointInfo;
    EndpointInfo endpointInfo(Endpoint *endpoint) const
    {
        return m_delivery.endpointInfo(endpoint);
    }
    void endpointClosed(Endpoint *endpoint) { m_delivery.endpointClosed(endpoint); }
    void endpointWritable(Endpoint *endpoint) { m_delivery.endpointWritable(endpoint); }

    // Read access for the admin views and metrics.
    const QHash<QString, Queue *> &queues() const { return m_topology.queues(); }
    const QHash<QString, ExchangeInfo> &exchanges() const { return m_topology.exchanges(); }
    QList<storage::BindingRecord> bindings() const { return m_topology.bindings(); }
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
    void purgeQueue(const QString &name, std::function<void(Outcome<qint64>)> done);
    void deleteQueue(const QString &name, std::function<void(Outcome<DeleteOutcome>)> done);
    // Sends up to `max` (0 = all) of the dead letters ready in `queue` back to the queues they
    // were dead-lettered from (one storage transaction); `done` gets how many.
    void requeueDeadLetters(const QString &queue, qint64 max,
                            std::function<void(Outcome<qint64>)> done);

    // The parts, for their unit tests.
    Topology &topology() { return m_topology; }
    DeliveryEngine &delivery() { return m_delivery; }

private:
    // Declared in the order they are built: the delivery engine's consumers go before the
    // topology's queues.
    storage::RouterStore &m_storage;
    RouterStats m_stats;
    LiveMessages m_live;
    Topology m_topology;
    DeliveryEngine m_delivery;
    PublishCoordinator m_publisher;
};

} // namespace cmq
