#pragma once
// The topology registry: exchanges (each with its type), bindings and queues, and the quotas
// on what each CN holds. Changes are stored first and applied once the store says they are
// durable. It owns the Queue objects; what is in them is the delivery engine's business.

#include <functional>
#include <memory>
#include <unordered_map>

#include <QHash>
#include <QList>
#include <QString>

#include "config/config.h"
#include "core/exchangetype.h"
#include "core/queue.h"
#include "core/refusal.h"

namespace cmq {

namespace storage {
class RouterStore;
struct BindingRecord;
struct QueueRecord;
struct RecoveredState;
} // namespace storage

struct ExchangeInfo
{
    QString name;
    QString type;
    QString creator;
};

class Topology
{
    Q_DISABLE_COPY_MOVE(Topology)

public:
    Topology(storage::RouterStore &store, const Config::Performance &performance);
    ~Topology();

    // Start-up: exchanges, queues and bindings as stored (the queued messages are not ours).
    void restore(const storage::RecoveredState &state);

    using Done = std::function<void(Verdict)>;
    // Re-declaring an exchange with its own type succeeds, whoever asks; with another type it
    // fails.
    void declareExchange(const QString &name, const QString &creator, Done done,
                         const ExchangeType &type = defaultExchangeType());
    void declareQueue(const QString &name, const QString &owner, Done done);
    void bind(const QString &queue, const QString &exchange, const QString &routingKey, Done done);
    // Stores then applies the queue's own limit (0 = the configured default), overflow policy
    // and message TTL (0 = none, negative = as it is); `done` also gets the queue it applied to
    // (null when it did not).
    // `deadLetter` changes what it names of the queue's dead-letter settings.
    void setQueuePolicy(const QString &queue, qint64 maxLength, const QString &overflow,
                        qint64 messageTtlMs, std::function<void(Verdict, Queue *)> done,
                        const DeadLetterPolicyChange &deadLetter = {});

    Queue *queue(const QString &name) const { return m_queues.value(name); }
    const QHash<QString, Queue *> &queues() const { return m_queues; }
    const QHash<QString, ExchangeInfo> &exchanges() const { return m_exchanges; }
    QList<storage::BindingRecord> bindings() const;

    // The queues a message published to `exchange` with `routingKey` goes to.
    QList<Queue *> route(const QString &exchange, const QString &routingKey) const;

    // Forgets the queue, its bindings and its quota share; the caller deletes it once the other
    // parts have let go of it. Null when there is no such queue.
    std::unique_ptr<Queue> takeQueue(const QString &name, qint64 *bindingsRemoved);

private:
    // What each CN holds, for its quotas (max_queues_per_cn and friends): queues it owns,
    // exchanges it created, bindings to its queues.
    struct Holdings
    {
        int queues = 0;
        int exchanges = 0;
        int bindings = 0;
    };
    Verdict checkQuota(const QString &cn, int Holdings::*what, int limit,
                       Refusal::Kind refused) const;
    void addExchange(const ExchangeInfo &info);
    void addBinding(const storage::BindingRecord &binding);
    Queue *addQueue(const storage::QueueRecord &record);
    // A stored max length of 0 means the configured default.
    qint64 effectiveMaxLength(qint64 stored) const
    {
        return stored > 0 ? stored : m_performance.maxQueueSize;
    }

    storage::RouterStore &m_store;
    Config::Performance m_performance;
    QHash<QString, Holdings> m_holdings;
    QHash<QString, ExchangeInfo> m_exchanges;
    QHash<QString, ExchangeBindings> m_bindings; // exchange → its bindings, as stored
    // exchange → its bindings as its type routes them
    std::unordered_map<QString, std::unique_ptr<BindingIndex>> m_indexes;
    QHash<QString, Queue *> m_queues;
};

} // namespace cmq
