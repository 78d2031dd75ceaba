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
