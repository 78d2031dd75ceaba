#pragma once
// Reads one reply line of the broker (docs/PROTOCOL.md) back into what replies.h built it from:
// its kind, the message id it names and its text. The client library decides on these, never
// on literal lines, so the two sides share one grammar. A pure function over bytes.

#include <QByteArrayView>

namespace cmq::protocol {

struct ReplyLine
{
    enum class Kind {
        Ack,                  // "ACK <id>"
        AckConfirmed,         // "ACK_CONFIRMED <id>"
        NackConfirmed,        // "NACK_CONFIRMED <id>"
        Message,              // "Message: <id> <json>"; text: the json (null if none at all)
        Redelivered,          // "Redelivered: <id>"
        Meta,                 // "Meta: <id> <json>" before a delivery asked with-meta; text: json
        PublicKey,            // "Public key: <base64>"; text: the key
        Heartbeat,            // "Heartbeat <seconds>"; text: the seconds
        QosSet,               // "Qos set to <n>"; text: n
        PresenceOn,           // "Presence on"
        PresenceOff,          // "Presence off"
        Presence,             // "Presence: <cn> online|offline"; text: "<cn> online|offline"
        Ping,                 // "PING"
        ShutdownNotice,       // "Server shutting down"
        QueueDeclared,        // "Queue declared"
        ExchangeDeclared,     // "Exchange declared"
        QueueBound,           // "Queue bound"
        QueuePolicySet,       // "Queue policy set"
        Subscribed,           // "Subscribed to queue"
        NoMessages,           // "No messages"
        ResendRequested,      // "Resend requested"
        UnauthorizedResend,   // "Unauthorized resend request"
        MessageIdNotFound,    // "Message ID not found"
        PublicKeyRegistered,  // "Public key registered"
        PublicKeyNotFound,    // "Public key not found"
        UnknownCommand,       // "Unknown command"
        Duplicate,            // "Error: Duplicate message <id> ignored" (+ the batch suffix)
        Unroutable,           // "Error: No queues bound to exchange ..." (+ the batch suffix)
        Error,                // "Error: <text>", "Error: <text> for message <id>"
        InvalidMessageFormat, // "Invalid message format: <text>"
        InvalidBatchFormat,   // "Invalid batch format: <text>"
        MissingArgument,      // "Missing parameters", "Missing queue name", ...; text: the line
        Other,                // anything else; text: the line
    };

    Kind kind = Kind::Other;
    // The message the line names: of an ACK, a delivery, a duplicate, a batch refusal. Empty
    // when it names none.
    QByteArrayView id;
    // For the three error kinds: what follows "Error: " (without the batch suffix); otherwise
    // as noted at each kind.
    QByteArrayView text;

    // An "Error: " line whose text starts with `prefix` ("Unauthorized", "rate limit exceeded").
    bool isError(QByteArrayView prefix = {}) const
    {
        return (kind == Kind::Error || kind == Kind::Duplicate || kind == Kind::Unroutable) &&
               text.startsWith(prefix);
    }
};

// `line` without its "\n" (one at the end is ignored). The views point into `line`.
ReplyLine readReply(QByteArrayView line);

} // namespace cmq::protocol
