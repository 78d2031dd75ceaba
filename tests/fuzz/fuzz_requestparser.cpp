// libFuzzer target for everything the broker does with a peer's bytes before any handler runs:
// line framing, request parsing, envelope inspection and batch splitting. Besides crashes and
// sanitizer reports it traps on broken invariants, so a wrong answer counts as a finding too.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <utility>

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include "fuzzcheck.h"
#include "protocol/envelope.h"
#include "protocol/lineframer.h"
#include "protocol/replies.h"
#include "protocol/request.h"

using namespace cmq::protocol;

namespace {

// A deliberately naive decoder of the UTF-8 definition (Unicode table 3-7), to cross-check the
// fast validator.
bool referenceUtf8(QByteArrayView bytes)
{
    const auto *p = reinterpret_cast<const unsigned char *>(bytes.data());
    const qsizetype n = bytes.size();
    for (qsizetype i = 0; i < n;) {
        const unsigned b = p[i];
        int extra;
        char32_t cp;
        char32_t min;
        if (b < 0x80) {
            ++i;
            continue;
        } else if ((b & 0xE0) == 0xC0) {
            extra = 1, cp = b & 0x1F, min = 0x80;
        } else if ((b & 0xF0) == 0xE0) {
            extra = 2, cp = b & 0x0F, min = 0x800;
        } else if ((b & 0xF8) == 0xF0) {
            extra = 3, cp = b & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (i + extra >= n) // truncated sequence
            return false;
        for (int k = 1; k <= extra; ++k) {
            if ((p[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += extra + 1;
    }
    return true;
}

bool isJsonWhitespace(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// How many arguments a parsed request of `command` carries, at least and at most.
std::pair<qsizetype, qsizetype> expectedArgs(Command command)
{
    switch (command) {
    case Command::Bind:
    case Command::Publish:
    case Command::PublishBatch:
        return {3, 3};
    case Command::QueuePolicy:
        return {3, 8}; // an optional message TTL, then up to four dead-letter options
    case Command::Pong:
        return {0, 0};
    case Command::Presence:
        return {0, 1};             // an optional on|off
    case Command::Nack:            // an optional requeue|drop
    case Command::DeclareExchange: // an optional exchange type
    case Command::Consume:         // an optional with-meta
    case Command::Fetch:
        return {1, 2};
    default:
        return {1, 1};
    }
}

bool isNumberUpTo(QByteArrayView text, qint64 max)
{
    if (text.isEmpty() || text.size() > 12)
        return false;
    qint64 value = 0;
    for (const char c : text) {
        if (c < '0' || c > '9')
            return false;
        value = value * 10 + (c - '0');
    }
    return value <= max;
}

// queue_policy's tail: the TTL (no "=") only in fourth place, then dead-letter options in the
// order of queuePolicyOptionNames, each once, with values the handler can take as they are.
void checkQueuePolicyOptions(const QList<QByteArray> &args)
{
    qsizetype next = 1; // index into queuePolicyOptionNames; ttl_ms (0) is never named
    for (qsizetype i = 3; i < args.size(); ++i) {
        const qsizetype eq = args[i].indexOf('=');
        if (eq < 0) {
            CHECK(i == 3);
            CHECK(isNumberUpTo(args[i], 31536000000));
            continue;
        }
        const QByteArrayView name = QByteArrayView(args[i]).first(eq);
        const QByteArrayView value = QByteArrayView(args[i]).sliced(eq + 1);
        qsizetype index = next;
        while (index < qsizetype(std::size(queuePolicyOptionNames)) &&
               queuePolicyOptionNames[index] != name)
            ++index;
        CHECK(index < qsizetype(std::size(queuePolicyOptionNames))); // known, in order, once
        next = index + 1;
        if (name == "dlx" || name == "dlx_key")
            CHECK(value.isEmpty() || isValidName(value));
        else if (name == "delivery_limit")
            CHECK(isNumberUpTo(value, 1000000));
        else
            CHECK(value == "on" || value == "off");
    }
}

void checkRequest(QByteArrayView line)
{
    const ParseResult result = parseRequest(line);
    if (result.status != ParseStatus::Ok) {
        CHECK(!result.errorReply.isEmpty());
        CHECK(!result.errorReply.contains('\n'));
        CHECK(result.request.args.isEmpty());
        return;
    }
    const Request &request = result.request;
    CHECK(!line.contains('\r')); // only the terminator's, which takeLine strips
    CHECK(request.command != Command::Unknown);
    CHECK(std::strlen(commandName(request.command)) > 0);
    const auto [fewest, most] = expectedArgs(request.command);
    CHECK(request.args.size() >= fewest && request.args.size() <= most);
    for (const QByteArray &arg : request.args) {
        CHECK(!arg.isEmpty());
        CHECK(line.contains(arg)); // arguments are slices of the line, never rewritten
    }

    switch (request.command) {
    case Command::Bind:
        for (const QByteArray &name : request.args)
            CHECK(isValidName(name));
        break;
    case Command::Publish:
    case Command::PublishBatch:
        CHECK(isValidName(request.args[0]) && isValidName(request.args[1]));
        CHECK(request.args[2].front() != ' ');
        // What the publish handler does next, and the reply it would build.
        if (request.command == Command::Publish) {
            if (const auto info = inspectEnvelope(request.args[2]))
                CHECK(reply::ack(info->messageId).count('\n') == 1);
        }
        break;
    case Command::QueuePolicy:
        CHECK(isValidName(request.args[0]));
        CHECK(request.args[2] == "drop-head" || request.args[2] == "reject-publish");
        checkQueuePolicyOptions(request.args);
        break;
    case Command::DeclareExchange:
        CHECK(isValidName(request.args[0]));
        // The type, if any, is the rest of the line (arguments are slices of it, checked
        // above); which types there are is the broker's registry's business.
        if (request.args.size() == 2)
            CHECK(request.args[1].front() != ' ' && request.args[1].back() != ' ');
        break;
    case Command::Presence:
        CHECK(request.args.isEmpty() || request.args[0] == "on" || request.args[0] == "off");
        break;
    case Command::Consume:
    case Command::Fetch:
        CHECK(isValidName(request.args[0]));
        CHECK(request.args.size() == 1 || request.args[1] == "with-meta");
        break;
    case Command::RegisterPublicKey:
    case Command::Heartbeat:
    case Command::Qos:
    case Command::Pong:
        break;
    default:
        CHECK(isValidName(request.args[0]));
        break;
    }
}

// Reads `input` the way a session reads its socket buffer.
void frameAll(QByteArrayView input, qsizetype maxLineLength)
{
    QByteArrayView buffer = input;
    for (;;) {
        const Frame frame = takeLine(buffer, maxLineLength);
        switch (frame.status) {
        case FrameStatus::Ok:
        case FrameStatus::InvalidUtf8:
            CHECK(frame.consumed > 0 && frame.consumed <= buffer.size());
            CHECK(frame.line.data() == buffer.data());
            CHECK(frame.line.size() <= maxLineLength);
            CHECK(frame.consumed == frame.line.size() + 1 ||
                  frame.consumed == frame.line.size() + 2);
            CHECK(buffer[frame.consumed - 1] == '\n');
            CHECK(!frame.line.contains('\n'));
            CHECK(referenceUtf8(frame.line) == (frame.status == FrameStatus::Ok));
            if (frame.status == FrameStatus::Ok)
                checkRequest(frame.line);
            {
                // Resuming after a prefix without "\n" (as a session does) finds the same line.
                const Frame resumed = takeLine(buffer, maxLineLength, frame.line.size());
                CHECK(resumed.status == frame.status && resumed.consumed == frame.consumed);
            }
            buffer = buffer.sliced(frame.consumed);
            continue;
        case FrameStatus::Incomplete:
            CHECK(frame.consumed == 0);
            CHECK(frame.scanned == buffer.size());
            CHECK(buffer.size() < maxLineLength + 2);
            CHECK(!buffer.contains('\n'));
            return;
        case FrameStatus::TooLong:
            CHECK(frame.consumed == 0);
            CHECK(buffer.size() > maxLineLength);
            return;
        }
    }
}

void checkBatch(QByteArrayView input)
{
    const auto split = splitJsonArray(input);
    if (!split) {
        CHECK(!split.error().isEmpty());
        return;
    }
    for (const QByteArrayView element : split.value()) {
        CHECK(!element.isEmpty());
        CHECK(element.data() >= input.data() &&
              element.data() + element.size() <= input.data() + input.size());
        CHECK(!isJsonWhitespace(element.front()) && !isJsonWhitespace(element.back()));
        (void)inspectEnvelope(element);
    }
    // Whatever the splitter accepts must be a JSON array to Qt too, with as many elements.
    // Qt is stricter in two ways the splitter deliberately is not, since every element goes
    // through inspectEnvelope (that is, Qt) afterwards anyway: it checks UTF-8 inside strings
    // (takeLine's job here) and refuses numbers beyond the range of a double ("1e999").
    if (referenceUtf8(input)) {
        QJsonParseError error;
        const QJsonDocument document =
            QJsonDocument::fromJson(QByteArray::fromRawData(input.data(), input.size()), &error);
        if (error.error == QJsonParseError::IllegalNumber)
            return;
        CHECK(error.error == QJsonParseError::NoError);
        CHECK(document.isArray());
        CHECK(document.array().size() == split->size());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView input(reinterpret_cast<const char *>(data), qsizetype(size));

    CHECK(isValidUtf8(input) == referenceUtf8(input));

    // A tiny limit exercises TooLong and the exact-limit edges; the default one the long lines.
    frameAll(input, 16);
    frameAll(input, 1024 * 1024);

    if (const auto info = inspectEnvelope(input)) {
        CHECK(isValidName(info->messageId));
        CHECK(!info->messageId.contains(' '));
    }
    checkBatch(input);
    return 0;
}
