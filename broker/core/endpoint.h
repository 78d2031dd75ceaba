#pragma once
// What the router needs from a client connection: an identity, a way to push deliveries, and
// whether it can take more right now (its output buffer is not backed up).

#include <QByteArray>
#include <QString>

namespace cmq {

struct Message;

// How one delivery goes out, beside the message itself.
struct DeliveryFacts
{
    bool redelivered = false;
    int deliveryCount = 1; // deliveries of this message from this queue, this one included
    bool withMeta = false; // the consumer asked for the "Meta:" line (consume ... with-meta)
    // Why the message was dead-lettered (deadLetterReasonName), for the "Meta:" line; empty for
    // any other message. With a reason, the rest of its record: where from, when, and its
    // deliveries there without an ack.
    QString deadLetterReason;
    QString deadLetterOriginalQueue;
    qint64 deadLetteredAtMs = 0;
    int deadLetterDeliveryCount = 0;
};

// The lines of one delivery as they go on the wire: "Message: ..." after "Redelivered: ..." or,
// with `facts.withMeta`, after "Meta: ..." (core/deliverylines.cpp).
QByteArray deliveryLines(const Message &message, const DeliveryFacts &facts);

class Endpoint
{
public:
    virtual ~Endpoint() = default;
    virtual quint64 endpointId() const = 0;
    virtual QString clientId() const = 0; // certificate CN
    // Sends `message` ("Message: ...", after "Redelivered: ..." when redelivered, or after
    // "Meta: ..." when the consumer asked for it) behind any replies already queued.
    virtual void pushDelivery(const Message &message, const DeliveryFacts &facts) = 0;
    // False while the connection's unsent output is above its limit (a slow consumer).
    virtual bool canTakeDeliveries() const = 0;
    // Sends an unsolicited line the client asked for (a "Presence: ..." line), behind any
    // replies already queued.
    virtual void pushEvent(const QByteArray &line) = 0;
};

} // namespace cmq
