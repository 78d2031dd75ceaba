#include "protocol/replyreader.h"

#include <utility>

namespace cmq::protocol {

namespace {

using Kind = ReplyLine::Kind;

struct Fixed
{
    QByteArrayView line;
    Kind kind;
};

constexpr Fixed fixedLines[] = {
    {"PING", Kind::Ping},
    {"Server shutting down", Kind::ShutdownNotice},
    {"Queue declared", Kind::QueueDeclared},
    {"Exchange declared", Kind::ExchangeDeclared},
    {"Queue bound", Kind::QueueBound},
    {"Queue policy set", Kind::QueuePolicySet},
    {"Subscribed to queue", Kind::Subscribed},
    {"No messages", Kind::NoMessages},
    {"Resend requested", Kind::ResendRequested},
    {"Unauthorized resend request", Kind::UnauthorizedResend},
    {"Message ID not found", Kind::MessageIdNotFound},
    {"Public key registered", Kind::PublicKeyRegistered},
    {"Public key not found", Kind::PublicKeyNotFound},
    {"Unknown command", Kind::UnknownCommand},
    {"Presence on", Kind::PresenceOn},
    {"Presence off", Kind::PresenceOff},
};

// "<prefix><rest>": the kind, with `rest` as the id or as the text.
struct Prefixed
{
    QByteArrayView prefix;
    Kind kind;
    bool restIsId;
};

constexpr Prefixed prefixedLines[] = {
    {"ACK ", Kind::Ack, true},
    {"ACK_CONFIRMED ", Kind::AckConfirmed, true},
    {"NACK_CONFIRMED ", Kind::NackConfirmed, true},
    {"Redelivered: ", Kind::Redelivered, true},
    {"Public key: ", Kind::PublicKey, false},
    {"Heartbeat ", Kind::Heartbeat, false},
    {"Qos set to ", Kind::QosSet, false},
    {"Presence: ", Kind::Presence, false},
    {"Invalid message format: ", Kind::InvalidMessageFormat, false},
    {"Invalid batch format: ", Kind::InvalidBatchFormat, false},
};

ReplyLine readError(QByteArrayView text)
{
    ReplyLine reply{Kind::Error, {}, text};
    // publish_batch names the message at the end: "<text> for message <id>" (ids hold no spaces).
    constexpr QByteArrayView batchSuffix = " for message ";
    if (const qsizetype at = text.lastIndexOf(batchSuffix); at >= 0) {
        const QByteArrayView id = text.sliced(at + batchSuffix.size());
        if (!id.isEmpty() && !id.contains(' ')) {
            reply.id = id;
            reply.text = text.first(at);
        }
    }
    constexpr QByteArrayView duplicatePrefix = "Duplicate message ";
    constexpr QByteArrayView duplicateSuffix = " ignored";
    if (reply.text.startsWith(duplicatePrefix) && reply.text.endsWith(duplicateSuffix)) {
        reply.kind = Kind::Duplicate;
        reply.id =
            reply.text.sliced(duplicatePrefix.size(),
                              reply.text.size() - duplicatePrefix.size() - duplicateSuffix.size());
    } else if (reply.text.startsWith("No queues bound to exchange ")) {
        reply.kind = Kind::Unroutable;
    }
    return reply;
}

} // namespace

ReplyLine readReply(QByteArrayView line)
{
    if (line.endsWith('\n'))
        line.chop(1);
    for (const Fixed &fixed : fixedLines) {
        if (line == fixed.line)
            return ReplyLine{fixed.kind, {}, {}};
    }
    if (line.startsWith("Error: "))
        return readError(line.sliced(7));
    // "<prefix><id> <json>"; the json is null when there is none at all.
    for (const auto &[prefix, kind] : {std::pair{QByteArrayView("Message: "), Kind::Message},
                                       std::pair{QByteArrayView("Meta: "), Kind::Meta}}) {
        if (!line.startsWith(prefix))
            continue;
        const QByteArrayView rest = line.sliced(prefix.size());
        const qsizetype space = rest.indexOf(' ');
        if (space < 0) // malformed: the receiver says so, with the line
            return ReplyLine{kind, rest, QByteArrayView()};
        return ReplyLine{kind, rest.first(space), rest.sliced(space + 1)};
    }
    for (const Prefixed &p : prefixedLines) {
        if (line.startsWith(p.prefix)) {
            const QByteArrayView rest = line.sliced(p.prefix.size());
            return p.restIsId ? ReplyLine{p.kind, rest, {}} : ReplyLine{p.kind, {}, rest};
        }
    }
    if (line.startsWith("Missing "))
        return ReplyLine{Kind::MissingArgument, {}, line};
    return ReplyLine{Kind::Other, {}, line};
}

} // namespace cmq::protocol
