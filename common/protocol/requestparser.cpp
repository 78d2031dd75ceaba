#include "protocol/request.h"
#include "protocol/words.h"

#include <algorithm>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <utility>

// Error replies of InvalidArgument (the compatibility profile has none; these are ours):
//   "Error: Invalid <what>: must not contain spaces or control characters"
//   "Error: Invalid <what>: longer than 255 bytes"
//       <what> is "queue name", "exchange name", "routing key", "message ID" or "client ID"
//   "Error: Invalid heartbeat interval: expected whole seconds from 1 to 3600"
//   "Error: Invalid prefetch count: expected a whole number from 0 to 65535"
//   "Error: Invalid nack mode: expected requeue or drop"
//   "Error: Invalid max length: expected a whole number from 0 to 1000000000"
//   "Error: Invalid overflow policy: expected drop-head or reject-publish"
//   "Error: Invalid message TTL: expected milliseconds from 0 to 31536000000"
//   "Error: Invalid queue policy option: expected ttl_ms, dlx, dlx_key, delivery_limit or
//    dead_letter_overflow"
//   "Error: Invalid queue policy option: each may be given once"
//   "Error: Invalid delivery limit: expected a whole number from 0 to 1000000"
//   "Error: Invalid dead-letter overflow: expected on or off"
//   "Error: Invalid exchange type: expected direct, fanout or topic"
//   "Error: pong takes no arguments"
//   "Error: Invalid presence mode: expected on or off"
//   "Error: Invalid request line: a carriage return may only end the line"

namespace cmq::protocol {

namespace {

// Ordered like the enum, so commandName() can index it.
constexpr words::CommandWord<Command> commands[] = {
    {"declare_queue", Command::DeclareQueue},
    {"declare_exchange", Command::DeclareExchange},
    {"bind", Command::Bind},
    {"publish", Command::Publish},
    {"publish_batch", Command::PublishBatch},
    {"consume", Command::Consume},
    {"fetch", Command::Fetch},
    {"ack", Command::Ack},
    {"resend", Command::Resend},
    {"register_public_key", Command::RegisterPublicKey},
    {"get_public_key", Command::GetPublicKey},
    {"heartbeat", Command::Heartbeat},
    {"pong", Command::Pong},
    {"qos", Command::Qos},
    {"nack", Command::Nack},
    {"queue_policy", Command::QueuePolicy},
    {"presence", Command::Presence},
};
static_assert(std::size(commands) == static_cast<size_t>(Command::Unknown));

enum class NameProblem { None, Empty, TooLong, BadCharacter };

// Whitespace (Unicode White_Space) or a control character (Cc) starting at bytes[i], which is
// not ASCII. Only these lead bytes can start one, so every other non-ASCII byte costs one switch.
bool isUnicodeSpaceOrControl(QByteArrayView bytes, qsizetype i)
{
    const auto at = [&](qsizetype k) {
        return k < bytes.size() ? static_cast<unsigned char>(bytes[k]) : 0u;
    };
    const unsigned b1 = at(i + 1);
    const unsigned b2 = at(i + 2);
    switch (static_cast<unsigned char>(bytes[i])) {
    case 0xC2: // U+0080..U+009F (C1 controls, NEL) and U+00A0 (no-break space)
        return b1 >= 0x80 && b1 <= 0xA0;
    case 0xE1: // U+1680 ogham space mark
        return b1 == 0x9A && b2 == 0x80;
    case 0xE2: // U+2000..U+200A, U+2028, U+2029, U+202F, U+205F
        return (b1 == 0x80 &&
                ((b2 >= 0x80 && b2 <= 0x8A) || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF)) ||
               (b1 == 0x81 && b2 == 0x9F);
    case 0xE3: // U+3000 ideographic space
        return b1 == 0x80 && b2 == 0x80;
    default:
        return false;
    }
}

NameProblem checkName(QByteArrayView name)
{
    if (name.isEmpty())
        return NameProblem::Empty;
    if (name.size() > MaxNameLength)
        return NameProblem::TooLong;
    for (qsizetype i = 0; i < name.size(); ++i) {
        const auto c = static_cast<unsigned char>(name[i]);
        if (c <= 0x20 || c == 0x7F)
            return NameProblem::BadCharacter;
        if (c >= 0x80 && isUnicodeSpaceOrControl(name, i))
            return NameProblem::BadCharacter;
    }
    return NameProblem::None;
}

// Words are separated by spaces only (protocol/words.h).
QByteArrayView skipSpaces(QByteArrayView text)
{
    return words::skip<words::isSpace>(text);
}

// The next word; `rest` moves past it.
QByteArrayView takeWord(QByteArrayView &rest)
{
    return words::take<words::isSpace>(rest);
}

ParseResult failure(ParseStatus status, QByteArray reply)
{
    ParseResult result;
    result.status = status;
    result.errorReply = std::move(reply);
    return result;
}

ParseResult missing(const char *reply)
{
    return failure(ParseStatus::MissingArguments, QByteArray(reply));
}

ParseResult invalid(const char *reply)
{
    return failure(ParseStatus::InvalidArgument, QByteArray(reply));
}

// Null when `name` is acceptable, else the InvalidArgument result naming `what`.
std::optional<ParseResult> validateName(QByteArrayView name, const char *what)
{
    switch (checkName(name)) {
    case NameProblem::None:
    case NameProblem::Empty: // callers report missing arguments themselves
        return std::nullopt;
    case NameProblem::TooLong:
        return failure(ParseStatus::InvalidArgument,
                       QByteArray("Error: Invalid ") + what + ": longer than 255 bytes");
    case NameProblem::BadCharacter:
        break;
    }
    return failure(ParseStatus::InvalidArgument,
                   QByteArray("Error: Invalid ") + what +
                       ": must not contain spaces or control characters");
}

// A plain decimal number within [min, max] (leading zeros allowed, no sign, no spaces).
bool isNumberInRange(QByteArrayView text, qint64 min, qint64 max)
{
    if (text.isEmpty())
        return false;
    qint64 value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9')
            return false;
        value = value * 10 + (c - '0');
        if (value > max)
            return false;
    }
    return value >= min;
}

ParseResult ok(Command command, std::initializer_list<QByteArrayView> args)
{
    ParseResult result;
    result.status = ParseStatus::Ok;
    result.request.command = command;
    result.request.args.reserve(qsizetype(args.size()));
    for (const QByteArrayView arg : args)
        result.request.args.append(arg.toByteArray());
    return result;
}

// declare_queue, consume, ack...: the rest of the line is one name.
ParseResult parseOneName(Command command, QByteArrayView rest, const char *missingReply,
                         const char *what)
{
    const QByteArrayView name = skipSpaces(rest);
    if (name.isEmpty())
        return missing(missingReply);
    if (auto error = validateName(name, what))
        return std::move(*error);
    return ok(command, {name});
}

// consume <queue> [with-meta], fetch <queue> [with-meta]. Any other second word keeps the old
// reading: one name with a space in it, refused as such.
ParseResult parseQueueRead(Command command, QByteArrayView rest)
{
    QByteArrayView words = skipSpaces(rest);
    const QByteArrayView queue = takeWord(words);
    if (skipSpaces(words) != "with-meta")
        return parseOneName(command, rest, "Missing queue name", "queue name");
    if (auto error = validateName(queue, "queue name"))
        return std::move(*error);
    return ok(command, {queue, "with-meta"});
}

ParseResult parseBind(QByteArrayView rest)
{
    const QByteArrayView queue = takeWord(rest);
    const QByteArrayView exchange = takeWord(rest);
    const QByteArrayView routingKey = skipSpaces(rest); // splitn(3): the rest of the line
    if (routingKey.isEmpty())
        return missing("Missing parameters");
    if (auto error = validateName(queue, "queue name"))
        return std::move(*error);
    if (auto error = validateName(exchange, "exchange name"))
        return std::move(*error);
    if (auto error = validateName(routingKey, "routing key"))
        return std::move(*error);
    return ok(Command::Bind, {queue, exchange, routingKey});
}

// publish and publish_batch: the JSON body is the rest of the line, byte for byte.
ParseResult parsePublish(Command command, QByteArrayView rest)
{
    const QByteArrayView exchange = takeWord(rest);
    const QByteArrayView routingKey = takeWord(rest);
    const QByteArrayView body = skipSpaces(rest);
    if (body.isEmpty())
        return missing("Missing parameters");
    if (auto error = validateName(exchange, "exchange name"))
        return std::move(*error);
    if (auto error = validateName(routingKey, "routing key"))
        return std::move(*error);
    return ok(command, {exchange, routingKey, body});
}

// declare_exchange <exchange> [type]: without a type, as the existing clients send it, the
// exchange is direct. The type is the rest of the line as given; the broker knows which types
// there are and refuses any other (Dispatcher::checkParsed), with the same line for every
// unknown type, extra words or odd characters included.
ParseResult parseDeclareExchange(QByteArrayView rest)
{
    const QByteArrayView exchange = takeWord(rest);
    const QByteArrayView type = skipSpaces(rest);
    if (exchange.isEmpty())
        return missing("Missing exchange name");
    if (auto error = validateName(exchange, "exchange name"))
        return std::move(*error);
    if (type.isEmpty())
        return ok(Command::DeclareExchange, {exchange});
    return ok(Command::DeclareExchange, {exchange, type});
}

ParseResult parseNack(QByteArrayView rest)
{
    const QByteArrayView id = takeWord(rest);
    const QByteArrayView mode = skipSpaces(rest);
    if (id.isEmpty())
        return missing("Missing message ID");
    if (auto error = validateName(id, "message ID"))
        return std::move(*error);
    if (mode.isEmpty())
        return ok(Command::Nack, {id});
    if (mode != "requeue" && mode != "drop")
        return invalid("Error: Invalid nack mode: expected requeue or drop");
    return ok(Command::Nack, {id, mode});
}

// queue_policy <queue> <max_length> <drop-head|reject-publish> [<message_ttl_ms>] [<option>=<value>
// ...]; max_length 0 = the configured performance.max_queue_size; no TTL =
// performance.message_ttl_ms, 0 = none. The options (docs/PROTOCOL.md, "Dead-lettering"):
// ttl_ms, dlx, dlx_key, delivery_limit, dead_letter_overflow, each once, in any order. The
// parsed form: queue, max_length, overflow, the TTL if given (positional or ttl_ms=, never
// with a "="), then the given dead-letter options as "<name>=<value>" in the order of
// queuePolicyOptionNames.
ParseResult parseQueuePolicy(QByteArrayView rest)
{
    const QByteArrayView queue = takeWord(rest);
    const QByteArrayView maxLength = takeWord(rest);
    const QByteArrayView overflow = takeWord(rest);
    const QByteArrayView tail = skipSpaces(rest);
    if (overflow.isEmpty())
        return missing("Missing parameters");
    if (auto error = validateName(queue, "queue name"))
        return std::move(*error);
    if (!isNumberInRange(maxLength, 0, 1000000000))
        return invalid("Error: Invalid max length: expected a whole number from 0 to 1000000000");
    if (overflow != "drop-head" && overflow != "reject-publish")
        return invalid("Error: Invalid overflow policy: expected drop-head or reject-publish");
    if (tail.isEmpty())
        return ok(Command::QueuePolicy, {queue, maxLength, overflow});
    const char *const badTtl =
        "Error: Invalid message TTL: expected milliseconds from 0 to 31536000000";
    QList<QByteArrayView> words = words::split<words::isSpace>(tail);
    QByteArrayView ttl;
    if (!words.first().contains('='))
        ttl = words.takeFirst();
    // Named options, by their index in queuePolicyOptionNames (0 is ttl_ms).
    std::optional<QByteArrayView> given[std::size(queuePolicyOptionNames)];
    for (const QByteArrayView word : std::as_const(words)) {
        const qsizetype eq = word.indexOf('=');
        if (eq < 0)
            return invalid(badTtl); // as before options: the rest of the line is no number
        const QByteArrayView name = word.first(eq);
        const QByteArrayView value = word.sliced(eq + 1);
        const auto *found =
            std::find(std::begin(queuePolicyOptionNames), std::end(queuePolicyOptionNames), name);
        if (found == std::end(queuePolicyOptionNames))
            return invalid("Error: Invalid queue policy option: expected ttl_ms, dlx, dlx_key, "
                           "delivery_limit or dead_letter_overflow");
        const auto index = std::distance(std::begin(queuePolicyOptionNames), found);
        if (given[index] || (index == 0 && !ttl.isEmpty()))
            return invalid("Error: Invalid queue policy option: each may be given once");
        given[index] = value;
    }
    if (given[0])
        ttl = *given[0];
    if ((given[0] || !ttl.isEmpty()) && !isNumberInRange(ttl, 0, 31536000000))
        return invalid(badTtl);
    // An empty dlx or dlx_key clears it.
    if (auto error = validateName(given[1].value_or(QByteArrayView()), "exchange name"))
        return std::move(*error);
    if (auto error = validateName(given[2].value_or(QByteArrayView()), "routing key"))
        return std::move(*error);
    if (given[3] && !isNumberInRange(*given[3], 0, 1000000))
        return invalid("Error: Invalid delivery limit: expected a whole number from 0 to 1000000");
    if (given[4] && *given[4] != "on" && *given[4] != "off")
        return invalid("Error: Invalid dead-letter overflow: expected on or off");
    ParseResult result = ttl.isEmpty()
                             ? ok(Command::QueuePolicy, {queue, maxLength, overflow})
                             : ok(Command::QueuePolicy, {queue, maxLength, overflow, ttl});
    for (size_t i = 1; i < std::size(queuePolicyOptionNames); ++i) {
        if (given[i])
            result.request.args.append(queuePolicyOptionNames[i].toByteArray() + '=' +
                                       given[i]->toByteArray());
    }
    return result;
}

ParseResult parseNumber(Command command, QByteArrayView rest, int min, int max,
                        const char *invalidReply)
{
    const QByteArrayView number = skipSpaces(rest);
    if (number.isEmpty())
        return missing("Missing parameters");
    if (!isNumberInRange(number, min, max))
        return invalid(invalidReply);
    return ok(command, {number});
}

} // namespace

bool isValidName(QByteArrayView name)
{
    return checkName(name) == NameProblem::None;
}

ParseResult parseRequest(QByteArrayView line)
{
    // takeLine has stripped the "\r" of a "\r\n" terminator; any other one would let a sender
    // forge a line (a "Message: ..." inside a body) for a reader that splits on "\r".
    if (line.contains('\r'))
        return invalid("Error: Invalid request line: a carriage return may only end the line");
    QByteArrayView rest = line.trimmed();
    const QByteArrayView word = takeWord(rest);

    const Command command = words::lookup(commands, word, Command::Unknown);
    switch (command) {
    case Command::DeclareQueue:
        return parseOneName(command, rest, "Missing queue name", "queue name");
    case Command::Consume:
    case Command::Fetch:
        return parseQueueRead(command, rest);
    case Command::DeclareExchange:
        return parseDeclareExchange(rest);
    case Command::Ack:
    case Command::Resend:
        return parseOneName(command, rest, "Missing message ID", "message ID");
    case Command::GetPublicKey:
        return parseOneName(command, rest, "Missing client ID", "client ID");
    case Command::RegisterPublicKey: {
        // The key's own checks (base64, 32 bytes) belong to the handler, which answers
        // "Error: <text>" as the original does.
        const QByteArrayView key = skipSpaces(rest);
        if (key.isEmpty())
            return missing("Missing public key");
        return ok(command, {key});
    }
    case Command::Bind:
        return parseBind(rest);
    case Command::Publish:
    case Command::PublishBatch:
        return parsePublish(command, rest);
    case Command::Nack:
        return parseNack(rest);
    case Command::QueuePolicy:
        return parseQueuePolicy(rest);
    case Command::Heartbeat:
        return parseNumber(command, rest, 1, 3600,
                           "Error: Invalid heartbeat interval: expected whole seconds from 1 to "
                           "3600");
    case Command::Qos:
        return parseNumber(command, rest, 0, 65535,
                           "Error: Invalid prefetch count: expected a whole number from 0 to "
                           "65535");
    case Command::Presence: {
        const QByteArrayView mode = skipSpaces(rest);
        if (mode.isEmpty())
            return ok(command, {});
        if (mode != "on" && mode != "off")
            return invalid("Error: Invalid presence mode: expected on or off");
        return ok(command, {mode});
    }
    case Command::Pong:
        if (!skipSpaces(rest).isEmpty())
            return invalid("Error: pong takes no arguments");
        return ok(command, {});
    case Command::Unknown:
        break;
    }
    return failure(ParseStatus::UnknownCommand, QByteArray("Unknown command"));
}

const char *commandName(Command command)
{
    const auto index = static_cast<size_t>(command);
    return index < std::size(commands) ? commands[index].name.data() : "unknown";
}

} // namespace cmq::protocol
