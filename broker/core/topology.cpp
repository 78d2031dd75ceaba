#include "core/topology.h"

#include "core/corelog.h"
#include "storage/storage.h"

namespace cmq {

namespace {

DeadLetterPolicy deadLetterPolicyOf(const storage::QueueRecord &record)
{
    return DeadLetterPolicy{record.deadLetterExchange, record.deadLetterRoutingKey,
                            record.deliveryLimit, record.deadLetterOverflow};
}

} // namespace

Topology::Topology(storage::RouterStore &store, const Config::Performance &performance)
    : m_store(store), m_performance(performance)
{
}

Topology::~Topology()
{
    qDeleteAll(m_queues);
}

void Topology::restore(const storage::RecoveredState &state)
{
    for (const storage::ExchangeRecord &e : state.exchanges)
        addExchange(ExchangeInfo{e.name, e.type, e.creator});
    for (storage::QueueRecord q : state.queues) {
        if (q.overflow.isEmpty())
            q.overflow = m_performance.overflowPolicy;
        addQueue(q);
    }
    for (const storage::BindingRecord &b : state.bindings)
        addBinding(b);
}

void Topology::addBinding(const storage::BindingRecord &binding)
{
    QStringList &queues = m_bindings[binding.exchange][binding.routingKey];
    if (queues.contains(binding.queue))
        return;
    queues.append(binding.queue);
    if (const auto index = m_indexes.find(binding.exchange); index != m_indexes.end())
        index->second->add(binding.routingKey, binding.queue);
    if (const Queue *queue = m_queues.value(binding.queue))
        ++m_holdings[queue->owner()].bindings;
}

void Topology::addExchange(const ExchangeInfo &info)
{
    const ExchangeType *type = findExchangeType(info.type);
    if (!type) {
        // Only a database written by a newer broker can hold one; route it as before.
        qCWarning(lcRouter, "exchange %s has unknown type '%s': routed as %s",
                  qPrintable(info.name), qPrintable(info.type),
                  qPrintable(defaultExchangeType().name()));
        type = &defaultExchangeType();
    }
    m_exchanges.insert(info.name, info);
    m_indexes[info.name] = type->newIndex();
    ++m_holdings[info.creator].exchanges;
}

Queue *Topology::addQueue(const storage::QueueRecord &record)
{
    Queue *&slot = m_queues[record.name];
    if (!slot) {
        slot = new Queue(record.name, record.owner, effectiveMaxLength(record.maxLength),
                         m_performance.maxQueueBytes, record.overflow);
        slot->setMessageTtlMs(record.messageTtlMs);
        slot->setDeadLetterPolicy(deadLetterPolicyOf(record));
        ++m_holdings[record.owner].queues;
    }
    return slot;
}

Verdict Topology::checkQuota(const QString &cn, int Holdings::*what, int limit,
                             Refusal::Kind refused) const
{
    // Counts what is committed; declares still in flight may pass it by a few.
    if (m_holdings.value(cn).*what < limit)
        return accepted();
    return Refusal::of(refused, {}, cn, {}, limit);
}

void Topology::declareExchange(const QString &name, const QString &creator, Done done,
                               const ExchangeType &type)
{
    // Re-declaring is an idempotent success, whoever asks: the shared exchange of the existing
    // clients (CipherMQ_exchange) is declared by every receiver. The creator is recorded.
    if (const auto existing = m_exchanges.constFind(name); existing != m_exchanges.cend()) {
        if (existing->type == type.name())
            return done(accepted());
        return done(
            Refusal::of(Refusal::Kind::ExchangeTypeMismatch, name, existing->type, type.name()));
    }
    if (Verdict quota = checkQuota(creator, &Holdings::exchanges, m_performance.maxExchangesPerCn,
                                   Refusal::Kind::ExchangeQuotaReached);
        !quota)
        return done(quota);
    const storage::ExchangeRecord record{name, type.name(), creator};
    m_store.saveExchange(record, [this, record, done = std::move(done)](Status status) {
        if (status && !m_exchanges.contains(record.name))
            addExchange(ExchangeInfo{record.name, record.type, record.creator});
        done(verdictOf(status));
    });
}

void Topology::declareQueue(const QString &name, const QString &owner, Done done)
{
    if (m_queues.contains(name))
        return done(accepted());
    if (Verdict quota = checkQuota(owner, &Holdings::queues, m_performance.maxQueuesPerCn,
                                   Refusal::Kind::QueueQuotaReached);
        !quota)
        return done(quota);
    storage::QueueRecord record;
    record.name = name;
    record.owner = owner;
    record.maxLength = m_performance.maxQueueSize;
    record.overflow = m_performance.overflowPolicy;
    record.messageTtlMs = m_performance.messageTtlMs;
    m_store.saveQueue(record, [this, record, done = std::move(done)](Status status) {
        if (status)
            addQueue(record);
        done(verdictOf(status));
    });
}

void Topology::bind(const QString &queue, const QString &exchange, const QString &routingKey,
                    Done done)
{
    if (!m_queues.contains(queue))
        return done(Refusal::queueNotFound(queue));
    if (!m_exchanges.contains(exchange))
        return done(Refusal::exchangeNotFound(exchange));
    if (m_bindings.value(exchange).value(routingKey).contains(queue))
        return done(accepted());
    if (Verdict quota =
            checkQuota(m_queues.value(queue)->owner(), &Holdings::bindings,
                       m_performance.maxBindingsPerCn, Refusal::Kind::BindingQuotaReached);
        !quota)
        return done(quota);
    const storage::BindingRecord record{queue, exchange, routingKey};
    m_store.saveBinding(record, [this, record, done = std::move(done)](Status status) {
        if (status && m_queues.contains(record.queue))
            addBinding(record);
        done(verdictOf(status));
    });
}

void Topology::setQueuePolicy(const QString &queue, qint64 maxLength, const QString &overflow,
                              qint64 messageTtlMs, std::function<void(Verdict, Queue *)> done,
                              const DeadLetterPolicyChange &deadLetter)
{
    const Queue *existing = m_queues.value(queue);
    if (!existing)
        return done(Refusal::queueNotFound(queue), nullptr);
    const DeadLetterPolicy dl = deadLetter.appliedTo(existing->deadLetterPolicy());
    if (dl.enabled() && !m_exchanges.contains(dl.exchange))
        return done(Refusal::exchangeNotFound(dl.exchange), nullptr);
    const storage::QueueRecord record{queue,
                                      existing->owner(),
                                      maxLength,
                                      overflow,
                                      messageTtlMs < 0 ? existing->messageTtlMs() : messageTtlMs,
                                      dl.exchange,
                                      dl.routingKey,
                                      dl.deliveryLimit,
                                      dl.onOverflow};
    m_store.saveQueue(record, [this, record, done = std::move(done)](Status status) {
        Queue *target = status ? m_queues.value(record.name) : nullptr;
        if (target) {
            target->setPolicy(effectiveMaxLength(record.maxLength), record.overflow);
            target->setMessageTtlMs(record.messageTtlMs);
            target->setDeadLetterPolicy(deadLetterPolicyOf(record));
        }
        done(verdictOf(status), target);
    });
}

QList<storage::BindingRecord> Topology::bindings() const
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

QList<Queue *> Topology::route(const QString &exchange, const QString &routingKey) const
{
    QList<Queue *> targets;
    const auto index = m_indexes.find(exchange);
    if (index == m_indexes.end())
        return targets;
    for (const QString &name : index->second->route(routingKey)) {
        if (Queue *queue = m_queues.value(name))
            targets.append(queue);
    }
    return targets;
}

std::unique_ptr<Queue> Topology::takeQueue(const QString &name, qint64 *bindingsRemoved)
{
    std::unique_ptr<Queue> queue(m_queues.take(name));
    if (!queue)
        return queue;
    qint64 removed = 0;
    for (auto e = m_bindings.begin(); e != m_bindings.end();) {
        const auto index = m_indexes.find(e.key());
        for (auto k = e->begin(); k != e->end();) {
            if (k->removeAll(name) > 0) {
                ++removed;
                if (index != m_indexes.end())
                    index->second->remove(k.key(), name);
            }
            k = k->isEmpty() ? e->erase(k) : std::next(k);
        }
        e = e->isEmpty() ? m_bindings.erase(e) : std::next(e);
    }
    Holdings &holdings = m_holdings[queue->owner()];
    --holdings.queues;
    holdings.bindings -= int(removed);
    if (bindingsRemoved)
        *bindingsRemoved = removed;
    return queue;
}

} // namespace cmq
