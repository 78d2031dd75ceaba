#pragma once
// Every reply line the broker sends, built in one place so the exact compatibility texts
// (shared/spec/compatibility.md) cannot drift. Each function returns the line with its "\n".

#include <QByteArray>
#include <QByteArrayView>

namespace cmq::protocol::reply {

QByteArray queueDeclared();                  // "Queue declared"
QByteArray exchangeDeclared();               // "Exchange declared"
QByteArray queueBound();                     // "Queue bound"
QByteArray queuePolicySet();                 // "Queue policy set" (extension)
QByteArray ack(QByteArrayView messageId);    // "ACK <id>"
QByteArray ackConfirmed(QByteArrayView id);  // "ACK_CONFIRMED <id>"
QByteArray subscribed();                     // "Subscribed to queue"
QByteArray noMessages();                     // "No messages"
QByteArray message(QByteArrayView messageId, QByteArrayView envelopeJson); // "Message: <id> <json>"
QByteArray resendRequested();                // "Resend requested"
QByteArray unauthorizedResend();             // "Unauthorized resend request"
QByteArray messageIdNotFound();              // "Message ID not found"
QByteArray publicKeyRegistered();            // "Public key registered"
QByteArray publicKey(QByteArrayView base64); // "Public key: <b64>"
QByteArray publicKeyNotFound();              // "Public key not found"
QByteArray unknownCommand();                 // "Unknown command"
QByteArray error(QByteArrayView text);       // "Error: <text>"
QByteArray batchError(QByteArrayView text, QByteArrayView messageId); // "Error: <text> for message <id>"
QByteArray invalidMessageFormat(QByteArrayView text); // "Invalid message format: <text>"
QByteArray invalidBatchFormat(QByteArrayView text);   // "Invalid batch format: <text>"
QByteArray duplicateMessage(QByteArrayView messageId); // "Error: Duplicate message <id> ignored"
QByteArray noQueuesBound(QByteArrayView exchange, QByteArrayView routingKey);
// "Error: No queues bound to exchange '<e>' with routing key '<rk>'"
// The texts of the two refusals above without "Error: " and "\n", for batchError().
QByteArray duplicateMessageText(QByteArrayView messageId);
QByteArray noQueuesBoundText(QByteArrayView exchange, QByteArrayView routingKey);
QByteArray raw(QByteArrayView line);         // any other line: appends "\n"

// The texts of the publish refusals, without "Error: " and "\n", for error() or batchError().
// The broker picks one per publish outcome in handlers/publishreplies.cpp. MiB figures come as
// text (limits::mebibytes).
// "Queue '<q>' is full (<limit> messages, overflow reject-publish): message <id> rejected",
// "bytes" instead of "messages" when `inBytes`
QByteArray queueFullText(QByteArrayView queue, qint64 limit, bool inBytes,
                         QByteArrayView messageId);
// "Message <id> of <bytes> bytes exceeds queue '<q>' byte limit (<limit> bytes,
// performance.max_queue_bytes)"
QByteArray exceedsQueueBytesText(QByteArrayView messageId, qint64 bytes, QByteArrayView queue,
                                 qint64 limit);
// "Memory alarm: the broker holds <held> MiB of its <budget> MiB budget
// (performance.memory_budget_mb): message <id> rejected"
QByteArray memoryAlarmText(QByteArrayView heldMib, QByteArrayView budgetMib,
                           QByteArrayView messageId);
// "Message <id> of <bytes> bytes does not fit in the broker's memory budget (<held> MiB of
// <budget> MiB held, performance.memory_budget_mb)"
QByteArray exceedsMemoryBudgetText(QByteArrayView messageId, qint64 bytes, QByteArrayView heldMib,
                                   QByteArrayView budgetMib);

// The texts of the topology, delivery and ACL refusals, without "Error: " and "\n", for error()
// or batchError(). The broker picks one per refusal in handlers/refusalreplies.cpp.
QByteArray queueNotFoundText(QByteArrayView queue);       // "Queue '<q>' not found"
QByteArray exchangeNotFoundText(QByteArrayView exchange); // "Exchange '<e>' not found"
// "Exchange '<e>' exists with type <type>, not <asked>"
QByteArray exchangeTypeMismatchText(QByteArrayView exchange, QByteArrayView type,
                                    QByteArrayView asked);
// "<Noun> quota of '<cn>' reached (<limit> <noun>s)", noun "Queue", "Exchange" or "Binding"
QByteArray quotaReachedText(QByteArrayView noun, QByteArrayView cn, qint64 limit);
// "Message <id> is not awaiting acknowledgement from this connection"
QByteArray notAwaitingAckText(QByteArrayView messageId);
QByteArray closedBeforeSubscriptionText(); // "Connection closed before the subscription"
// "Permission denied: '<command>' is not allowed for role <roles>"
QByteArray commandDeniedText(QByteArrayView command, QByteArrayView roles);
// "Permission denied: queue '<q>' is outside the namespace of <cn> (receivers use queues named
// '<cn>_...')"
QByteArray queueOutsideNamespaceText(QByteArrayView queue, QByteArrayView cn);
// "Permission denied: routing key '<key>' must be <cn> or start with <cn>_"
QByteArray routingKeyOutsideNamespaceText(QByteArrayView routingKey, QByteArrayView cn);
// "Permission denied: fanout exchange '<e>' takes bindings from its creator <creator> only"
QByteArray fanoutCreatorOnlyText(QByteArrayView exchange, QByteArrayView creator);
// "Permission denied: topic pattern '<key>' must start with the literal words of <cn>"
QByteArray topicPatternWildcardText(QByteArrayView bindingKey, QByteArrayView cn);
// "Permission denied: queue '<q>' belongs to <owner>"
QByteArray queueOwnedByOtherText(QByteArrayView queue, QByteArrayView owner);
// "Permission denied: a dead-letter exchange publishes for the queue's owner, and role <roles>
// may not publish"
QByteArray deadLetterNeedsPublishText(QByteArrayView roles);
// "Permission denied: <cn> is in no acl.presence_groups group, so it may not see presence"
QByteArray presenceNotInGroupText(QByteArrayView cn);

// The rate limiter's refusals (docs/PROTOCOL.md), without "Error: " and "\n"; the broker picks
// one in handlers/refusalreplies.cpp. The client is "CN '<cn>'" when `byCn`, else "IP <ip>".
// "rate limit exceeded: <publish|request> rate of <client> is limited to <rate>/s (burst <b>)"
QByteArray rateLimitExceededText(bool publish, bool byCn, QByteArrayView key, double rate,
                                 double burst);
// "Too many connections for CN '<cn>' (limit <n>)" or "Too many connections from <ip> (limit <n>)"
QByteArray tooManyConnectionsText(bool byCn, QByteArrayView key, qint64 limit);

// Extension lines (docs/PROTOCOL.md).
QByteArray ping();                           // "PING"
QByteArray heartbeatAccepted(int seconds);   // "Heartbeat <seconds>"
QByteArray shutdownNotice();                 // "Server shutting down"
// Precedes the "Message:" line of a delivery that was delivered before and not acknowledged.
// Existing receivers ignore lines that do not start with "Message:", so it is always sent.
QByteArray redelivered(QByteArrayView messageId); // "Redelivered: <id>"
// A delivery: "Message: <id> <json>", after "Redelivered: <id>" when `redelivered`.
QByteArray delivery(QByteArrayView messageId, QByteArrayView envelopeJson, bool redelivered);

// What the broker itself knows about a delivery, for consumers that asked for it
// (`consume <queue> with-meta`, `fetch <queue> with-meta`).
struct DeliveryMeta
{
    QByteArrayView sender;           // the publishing connection's verified certificate CN
    qint64 publishedAtMs = 0;        // when the broker accepted the publish, ms since the epoch
    bool redelivered = false;        // delivered before and not acknowledged
    int deliveryCount = 1;           // this delivery included
    QByteArrayView deadLetterReason; // empty unless the message was dead-lettered
    // The rest of a dead letter's record (told only with a reason): the queue it was
    // dead-lettered from, when, and its deliveries there without an ack.
    QByteArrayView deadLetterOriginalQueue;
    qint64 deadLetteredAtMs = 0;
    int deadLetterDeliveryCount = 0;
};
// "Meta: <id> {"sender":...}" immediately followed by "Message: <id> <json>". Replaces the
// "Redelivered:" line (the meta says it), so only consumers that asked ever see it.
QByteArray deliveryWithMeta(QByteArrayView messageId, QByteArrayView envelopeJson,
                            const DeliveryMeta &meta);
QByteArray nackConfirmed(QByteArrayView messageId); // "NACK_CONFIRMED <id>"
QByteArray qosSet(int prefetch);               // "Qos set to <n>"
QByteArray presenceOn();                       // "Presence on"
QByteArray presenceOff();                      // "Presence off"
// "Presence: <cn> online" / "Presence: <cn> offline", told to presence subscribers.
QByteArray presence(QByteArrayView cn, bool online);

} // namespace cmq::protocol::reply
