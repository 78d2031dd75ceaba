#pragma once
// How an exchange of one type picks the queues for a routing key from its bindings. One class
// per type, each in its own file, listed in the registry (exchangetypes.cpp): a topic or
// fanout exchange is one more class and one more line there.

#include <QHash>
#include <QString>
#include <QStringList>
#include <QStringView>

namespace cmq {

// An exchange's bindings: binding key → the queues bound with it, in binding order.
using ExchangeBindings = QHash<QString, QStringList>;

class ExchangeType
{
public:
    virtual ~ExchangeType() = default;
    virtual QString name() const = 0; // as stored in exchanges.type and shown by the admin views
    // The names of the queues a message published with `routingKey` goes to, each once.
    virtual QStringList route(const ExchangeBindings &bindings,
                              const QString &routingKey) const = 0;
};

// The registered type called `name`, or null.
const ExchangeType *findExchangeType(QStringView name);
// The type every exchange declared over the protocol gets (declare_exchange names none).
const ExchangeType &defaultExchangeType();

} // namespace cmq
