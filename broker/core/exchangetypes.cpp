// The registry of exchange types, and the binding indexes of the simple ones: add a type here
// and in its own file.

#include "core/directexchange.h"
#include "core/exchangetype.h"
#include "core/fanoutexchange.h"
#include "core/topicexchange.h"

namespace cmq {

namespace {

class DirectIndex final : public BindingIndex
{
public:
    void add(const QString &bindingKey, const QString &queue) override
    {
        QStringList &queues = m_byKey[bindingKey];
        if (!queues.contains(queue))
            queues.append(queue);
    }
    void remove(const QString &bindingKey, const QString &queue) override
    {
        const auto it = m_byKey.find(bindingKey);
        if (it == m_byKey.end())
            return;
        it->removeAll(queue);
        if (it->isEmpty())
            m_byKey.erase(it);
    }
    QStringList route(const QString &routingKey) const override
    {
        return m_byKey.value(routingKey);
    }

private:
    ExchangeBindings m_byKey;
};

// A queue bound with several keys still gets one copy: it is counted per key.
class FanoutIndex final : public BindingIndex
{
public:
    void add(const QString &, const QString &queue) override
    {
        if (m_keysPerQueue[queue]++ == 0)
            m_queues.append(queue);
    }
    void remove(const QString &, const QString &queue) override
    {
        const auto it = m_keysPerQueue.find(queue);
        if (it == m_keysPerQueue.end())
            return;
        if (--*it <= 0) {
            m_keysPerQueue.erase(it);
            m_queues.removeAll(queue);
        }
    }
    QStringList route(const QString &) const override { return m_queues; }

private:
    QHash<QString, int> m_keysPerQueue;
    QStringList m_queues; // binding order
};

const DirectExchange direct;
const FanoutExchange fanout;
const TopicExchange topic;

const ExchangeType *const registered[] = {&direct, &fanout, &topic};

} // namespace

std::unique_ptr<BindingIndex> DirectExchange::newIndex() const
{
    return std::make_unique<DirectIndex>();
}

std::unique_ptr<BindingIndex> FanoutExchange::newIndex() const
{
    return std::make_unique<FanoutIndex>();
}

const ExchangeType *findExchangeType(QStringView name)
{
    for (const ExchangeType *type : registered) {
        if (type->name() == name)
            return type;
    }
    return nullptr;
}

const ExchangeType &defaultExchangeType()
{
    return direct;
}

QString exchangeTypeNames()
{
    QString names;
    const qsizetype count = qsizetype(std::size(registered));
    for (qsizetype i = 0; i < count; ++i) {
        if (i > 0)
            names += i == count - 1 ? QStringLiteral(" or ") : QStringLiteral(", ");
        names += registered[i]->name();
    }
    return names;
}

} // namespace cmq
