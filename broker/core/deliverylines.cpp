#include "core/endpoint.h"
#include "core/message.h"
#include "protocol/replies.h"

namespace cmq {

QByteArray deliveryLines(const Message &message, const DeliveryFacts &facts)
{
    if (!facts.withMeta)
        return protocol::reply::delivery(message.id, message.envelope, facts.redelivered);
    // The sender is the broker's record of the publishing connection's certificate CN, never
    // anything the envelope says: that is what makes it an attestation.
    protocol::reply::DeliveryMeta meta;
    const QByteArray sender = message.sender.toUtf8();
    const QByteArray reason = facts.deadLetterReason.toUtf8();
    const QByteArray originalQueue = facts.deadLetterOriginalQueue.toUtf8();
    meta.sender = sender;
    meta.publishedAtMs = message.sentTime.toMSecsSinceEpoch();
    meta.redelivered = facts.redelivered;
    meta.deliveryCount = facts.deliveryCount;
    meta.deadLetterReason = reason;
    meta.deadLetterOriginalQueue = originalQueue;
    meta.deadLetteredAtMs = facts.deadLetteredAtMs;
    meta.deadLetterDeliveryCount = facts.deadLetterDeliveryCount;
    return protocol::reply::deliveryWithMeta(message.id, message.envelope, meta);
}

} // namespace cmq
