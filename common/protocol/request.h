#pragma once
// The commands of the CipherMQ line protocol and the parsed form of one request line.

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

namespace cmq::protocol {

enum class Command {
    // The compatibility profile (docs/PROTOCOL.md, shared/spec/compatibility.md).
    DeclareQueue,
    DeclareExchange,
    Bind,
    Publish,
    PublishBatch,
    Consume,
    Fetch,
    Ack,
    Resend,
    RegisterPublicKey,
    GetPublicKey,
    // Extensions; never sent unsolicited to clients that do not use them.
    Heartbeat, // heartbeat <seconds>: ask the broker to ping after that much silence
    Pong,      // pong: answer to the broker's ping (any line counts as traffic too)
    Qos,       // qos <prefetch>
    Nack,      // nack <message_id> [requeue|drop]
    QueuePolicy, // queue_policy <queue> <max_length> <drop-head|reject-publish>
    Presence,    // presence [on|off]: be told when the identities we may see come and go
    Unknown,
};

struct Request
{
    Command command = Command::Unknown;
    // Positional arguments. The last argument of a command takes the rest of the line,
    // spaces included (the JSON body of publish).
    QList<QByteArray> args;
};

enum class ParseStatus {
    Ok,
    MissingArguments, // `errorReply` holds the exact compatibility reply, e.g. "Missing queue name"
    InvalidArgument,  // e.g. a name with control characters; `errorReply` says which
    UnknownCommand,   // errorReply "Unknown command"
};

struct ParseResult
{
    ParseStatus status = ParseStatus::UnknownCommand;
    Request request;
    QByteArray errorReply; // without the trailing "\n"
};

// Parses one line as delivered by takeLine (already without its terminator, valid UTF-8).
// Leading and trailing ASCII whitespace is ignored, as the original broker trims requests; a
// carriage return anywhere in the line is refused (InvalidArgument).
ParseResult parseRequest(QByteArrayView line);

// The wire name of a command ("declare_queue"), for logs and metrics.
const char *commandName(Command command);

// The named options of queue_policy, in the order the parsed form lists them (ttl_ms goes to
// its positional place instead).
inline constexpr QByteArrayView queuePolicyOptionNames[] = {
    "ttl_ms", "dlx", "dlx_key", "delivery_limit", "dead_letter_overflow"};

// Queue, exchange, routing-key, message-id and client-id names end up inside reply lines
// ("ACK <id>") and logs, so they are kept to one printable token of bounded size.
inline constexpr qsizetype MaxNameLength = 255;

// True for 1..MaxNameLength bytes without whitespace or control characters (ASCII or Unicode).
bool isValidName(QByteArrayView name);

} // namespace cmq::protocol
