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

#include "core/refusal.h"

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
    // The rule a type adds to binding `bindingKey` to one of its exchanges, made by `creator`,
    // for a receiver `cn` whose key already passed AclManager::mayBindRoutingKey (admins are
    // not asked). Any key by default.
    virtual Verdict mayBind(const QString &cn, const QString &exchange, const QString &creator,
                            const QString &bindingKey) const
    {
        Q_UNUSED(cn);
        Q_UNUSED(exchange);
        Q_UNUSED(creator);
        Q_UNUSED(bindingKey);
        return accepted();
    }
};

// The registered type called `name`, or null.
const ExchangeType *findExchangeType(QStringView name);
// The type of an exchange declared without one (declare_exchange <name>): direct.
const ExchangeType &defaultExchangeType();
// The registered names in the registry's order, as a reply lists them: "direct, fanout or topic".
QString exchangeTypeNames();

} // namespace cmq
