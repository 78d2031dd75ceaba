#pragma once
// Dead-lettering: where a queue sends the messages it gives up on, and the record a
// dead-lettered message carries from then on (why and where from). The record travels with the
// message through the dead-letter queue, so an admin view or a delivery with metadata can show
// it; it is stored beside the queue entry (table dead_letters, docs/STORAGE.md).

#include <memory>
#include <optional>

#include <QDateTime>
#include <QString>
#include <QStringView>

namespace cmq {

enum class DeadLetterReason {
    Rejected,      // nack ... drop
    Expired,       // past its TTL
    Overflow,      // evicted by drop-head (only when the queue asks for it)
    DeliveryLimit, // delivered delivery_limit times without an ack (a poison message)
};
inline constexpr int DeadLetterReasonCount = 4;

// "rejected", "expired", "overflow", "delivery_limit": the wire, storage and metric names.
const char *deadLetterReasonName(DeadLetterReason reason);
std::optional<DeadLetterReason> deadLetterReasonFromName(QStringView name);

struct DeadLetterRecord
{
    DeadLetterReason reason = DeadLetterReason::Rejected;
    QString originalQueue; // the queue it was dead-lettered from (requeue sends it back there)
    QDateTime at;          // when, UTC
    int deliveryCount = 0; // deliveries in the original queue without an ack
};
using DeadLetterPtr = std::shared_ptr<const DeadLetterRecord>;

// A queue's dead-letter settings (queue_policy ... dlx=... dlx_key=... delivery_limit=...
// dead_letter_overflow=on). No exchange: messages are dropped as before; a delivery limit
// without one drops the poison message.
struct DeadLetterPolicy
{
    QString exchange;
    QString routingKey;       // empty: the message's own routing key
    qint64 deliveryLimit = 0; // 0 = unlimited
    bool onOverflow = false;  // drop-head evictions are dead-lettered too
    bool enabled() const { return !exchange.isEmpty(); }
    bool operator==(const DeadLetterPolicy &) const = default;
};

// What a queue_policy request changes of it: what it names, the rest stays as it is.
struct DeadLetterPolicyChange
{
    std::optional<QString> exchange;
    std::optional<QString> routingKey;
    std::optional<qint64> deliveryLimit;
    std::optional<bool> onOverflow;
    DeadLetterPolicy appliedTo(DeadLetterPolicy policy) const
    {
        policy.exchange = exchange.value_or(policy.exchange);
        policy.routingKey = routingKey.value_or(policy.routingKey);
        policy.deliveryLimit = deliveryLimit.value_or(policy.deliveryLimit);
        policy.onOverflow = onOverflow.value_or(policy.onOverflow);
        return policy;
    }
};

} // namespace cmq
