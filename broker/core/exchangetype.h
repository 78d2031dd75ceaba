#pragma once
// How an exchange of one type picks the queues for a routing key from its bindings. One class
// per type, each in its own file, listed in the registry (exchangetypes.cpp): a type is one
// more class and one more line there. Each exchange gets its own binding index from its type,
// so a type can keep whatever structure routes fast (the topic trie).

#include <memory>

#include <QHash>
#include <QString>
#include <QStringList>
#include <QStringView>

namespace cmq {

// An exchange's bindings: binding key → the queues bound with it, in binding order.
using ExchangeBindings = QHash<QString, QStringList>;

// One exchange's bindings as its type routes them. Told every binding added and removed.
class BindingIndex
{
public:
    virtual ~BindingIndex() = default;
    virtual void add(const QString &bindingKey, const QString &queue) = 0;
    virtual void remove(const QString &bindingKey, const QString &queue) = 0;
    // The names of the queues a message published with `routingKey` goes to, each once.
    virtual QStringList route(const QString &routingKey) const = 0;
};

class ExchangeType
{
public:
    virtual ~ExchangeType() = default;
    virtual QString name() const = 0; // as stored in exchanges.type and shown by the admin views
    virtual std::unique_ptr<BindingIndex> newIndex() const = 0;
};

// The registered type called `name`, or null.
const ExchangeType *findExchangeType(QStringView name);
// The type of an exchange declared without one (declare_exchange <name>): direct.
const ExchangeType &defaultExchangeType();

} // namespace cmq
