// libFuzzer target for the envelope validator (inspectEnvelope) and the batch splitter: the
// broker accepts an envelope exactly when it is a JSON object with the five string fields and
// a message_id that is one printable token, and then reports that id unchanged. Besides
// crashes and sanitizer reports it traps on a wrong answer.
//
// The first input byte picks how the rest is used:
//   'r' and anything else: the bytes are the envelope (or the batch) as sent;
//   'i': the bytes are a message_id, JSON-escaped into an otherwise valid envelope, so the
//        verdict can be compared with an independent definition of a valid id;
//   'f': the bytes are spliced raw between the quotes of message_id (escapes, surrogates).

#include <cmath>
#include <cstddef>
#include <cstdint>

#include <QByteArray>
#include <QByteArrayView>
#include <QChar>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QString>
#include <QStringDecoder>

#include "fuzzcheck.h"
#include "protocol/envelope.h"
#include "protocol/request.h"

using namespace cmq::protocol;

namespace {

const char *const kRequiredFields[] = {"message_id", "receiver_client_id", "enc_session_key",
                                       "nonce", "ciphertext"};

// The documented rule for ids, written from its definition rather than the broker's byte
// tables: valid UTF-8, 1..255 bytes, no Unicode White_Space (Zs, Zl, Zp and the spacing Cc) and
// no control character (Cc).
bool referenceValidId(QByteArrayView bytes)
{
    if (bytes.isEmpty() || bytes.size() > MaxNameLength)
        return false;
    auto decoder = QStringDecoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString text = decoder(bytes);
    if (decoder.hasError())
        return false;
    for (const char32_t cp : text.toUcs4()) {
        switch (QChar::category(cp)) {
        case QChar::Separator_Space:
        case QChar::Separator_Line:
        case QChar::Separator_Paragraph:
        case QChar::Other_Control:
            return false;
        default:
            break;
        }
    }
    return true;
}

// What inspectEnvelope must say about `json`, derived from Qt's own reading of the document.
void checkVerdict(QByteArrayView json)
{
    const auto info = inspectEnvelope(json);
    QJsonParseError error;
    const QJsonDocument document =
        QJsonDocument::fromJson(QByteArray::fromRawData(json.data(), json.size()), &error);
    if (!info) {
        CHECK(!info.error().isEmpty());
        CHECK(!info.error().contains(QLatin1Char('\n')));
    }
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        CHECK(!info);
        return;
    }
    const QJsonObject object = document.object();
    bool shapeOk = true;
    for (const char *field : kRequiredFields)
        shapeOk = shapeOk && object.value(QLatin1StringView(field)).isString();
    if (object.contains(QLatin1StringView("sent_time")))
        shapeOk = shapeOk && object.value(QLatin1StringView("sent_time")).isString();
    // docs/PROTOCOL.md: an optional ttl_ms, a whole number of milliseconds from 1 to a year.
    qint64 ttlMs = 0;
    if (object.contains(QLatin1StringView("ttl_ms"))) {
        const QJsonValue ttl = object.value(QLatin1StringView("ttl_ms"));
        const double value = ttl.toDouble(-1);
        const bool whole =
            ttl.isDouble() && value >= 1 && value <= 31536000000.0 && std::floor(value) == value;
        shapeOk = shapeOk && whole;
        if (whole)
            ttlMs = qint64(value);
    }
    const QString id = object.value(QLatin1StringView("message_id")).toString();
    const bool idOk = id.isValidUtf16() && referenceValidId(id.toUtf8());
    CHECK(bool(info) == (shapeOk && idOk));
    if (info) {
        CHECK(info->messageId == id.toUtf8());
        CHECK(isValidName(info->messageId));
        CHECK(info->ttlMs == ttlMs);
        CHECK(info->receiverClientId ==
              object.value(QLatin1StringView("receiver_client_id")).toString().toUtf8());
    }
}

QByteArray envelopeAround(QByteArrayView idJson)
{
    return QByteArray(R"({"message_id": ")")
        .append(idJson)
        .append(
            R"(", "receiver_client_id": "receiver_1", "enc_session_key": "a2V5", )"
            R"("nonce": "bm9uY2U=", "ciphertext": "Y3Q=", "sent_time": "2024-05-01T10:00:00Z"})");
}

// JSON string content whose value is exactly `bytes` (invalid UTF-8 stays invalid).
QByteArray jsonEscaped(QByteArrayView bytes)
{
    QByteArray out;
    for (const char c : bytes) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20) {
            out += QByteArray("\\u00") + QByteArray::number(u, 16).rightJustified(2, '0');
        } else {
            out += c;
        }
    }
    return out;
}

void checkEscapedId(QByteArrayView id)
{
    const QByteArray json = envelopeAround(jsonEscaped(id));
    const auto info = inspectEnvelope(json);
    CHECK(bool(info) == referenceValidId(id));
    if (info)
        CHECK(info->messageId == id);
    checkVerdict(json);
}

void checkBatchOfEnvelopes(QByteArrayView input)
{
    const auto split = splitJsonArray(input);
    if (!split)
        return;
    for (const QByteArrayView element : split.value())
        checkVerdict(element);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const QByteArrayView rest(reinterpret_cast<const char *>(data) + 1, qsizetype(size - 1));
    switch (data[0]) {
    case 'i':
        checkEscapedId(rest);
        break;
    case 'f':
        checkVerdict(envelopeAround(rest));
        break;
    default:
        checkVerdict(rest);
        checkBatchOfEnvelopes(rest);
        break;
    }
    return 0;
}
