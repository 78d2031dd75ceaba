#pragma once
// What the router needs from a client connection: an identity, a way to push deliveries, and
// whether it can take more right now (its output buffer is not backed up).

#include <QByteArray>
#include <QString>

namespace cmq {

struct Message;

class Endpoint
{
public:
    virtual ~Endpoint() = default;
    virtual quint64 endpointId() const = 0;
    virtual QString clientId() const = 0; // certificate CN
    // Sends `message` ("Message: ...", after "Redelivered: ..." when `redelivered`) behind any
    // replies already queued.
    virtual void pushDelivery(const Message &message, bool redelivered) = 0;
    // False while the connection's unsent output is above its limit (a slow consumer).
    virtual bool canTakeDeliveries() const = 0;
    // Sends an unsolicited line the client asked for (a "Presence: ..." line), behind any
    // replies already queued.
    virtual void pushEvent(const QByteArray &line) = 0;
};

} // namespace cmq
