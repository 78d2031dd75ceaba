#include "protocol/envelope.h"

#include <utility>

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QJsonValue>
#include <QLatin1StringView>
#include <QString>

#include "protocol/flatenvelope.h"
#include "protocol/request.h"

namespace cmq::protocol {

namespace {

using EnvelopeResult = Result<EnvelopeInfo>;

// Empty when object[name] is a string (stored in *out if given), else the error text. The
// wording follows serde ("missing field `nonce`"), which the original broker sent and existing
// clients log.
QString takeStringField(const QJsonObject &object, QLatin1StringView name, QString *out)
{
    const auto it = object.constFind(name);
    if (it == object.constEnd())
        return QStringLiteral("missing field `%1`").arg(name);
    if (!it->isString())
        return QStringLiteral("field `%1` must be a string").arg(name);
    if (out)
        *out = it->toString();
    return {};
}

// Nesting limit of splitJsonArray, the outer array included. Envelopes are flat objects; the
// limit only keeps hostile input cheap.
constexpr int MaxDepth = 64;

// Recognises one JSON value at a time without building anything: publish_batch only needs to
// know where each element starts and ends, and QJsonDocument validates each element later.
class ArrayScanner
{
public:
    explicit ArrayScanner(QByteArrayView json) : m_data(json.data()), m_size(json.size()) {}

    Result<QList<QByteArrayView>> split()
    {
        QList<QByteArrayView> elements;
        skipWhitespace();
        if (atEnd() || m_data[m_pos] != '[')
            return fail(QStringLiteral("expected a JSON array"));
        ++m_pos;
        skipWhitespace();
        if (!atEnd() && m_data[m_pos] == ']') {
            ++m_pos;
        } else {
            for (;;) {
                skipWhitespace();
                const qsizetype start = m_pos;
                if (!scanValue())
                    return fail(m_error);
                elements.append(QByteArrayView(m_data + start, m_pos - start));
                skipWhitespace();
                if (atEnd())
                    return fail(QStringLiteral("unexpected end of input, expected `,` or `]`"));
                const char c = m_data[m_pos++];
                if (c == ']')
                    break;
                if (c != ',')
                    return failAt(QStringLiteral("expected `,` or `]`"), m_pos - 1);
            }
        }
        skipWhitespace();
        if (!atEnd())
            return failAt(QStringLiteral("trailing characters after the array"), m_pos);
        return elements;
    }

private:
    bool atEnd() const { return m_pos >= m_size; }

    void skipWhitespace()
    {
        while (m_pos < m_size) {
            const char c = m_data[m_pos];
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
                return;
            ++m_pos;
        }
    }

    Result<QList<QByteArrayView>> fail(const QString &error)
    {
        return Result<QList<QByteArrayView>>::failure(error);
    }

    Result<QList<QByteArrayView>> failAt(const QString &what, qsizetype offset)
    {
        return fail(QStringLiteral("%1 at offset %2").arg(what).arg(offset));
    }

    bool error(const QString &what)
    {
        m_error = atEnd() ? QStringLiteral("unexpected end of input, %1").arg(what)
                          : QStringLiteral("%1 at offset %2").arg(what).arg(m_pos);
        return false;
    }

    // One complete value: iterative, with an explicit stack of open containers, so hostile
    // nesting costs neither recursion nor more than MaxDepth bytes of state.
    bool scanValue()
    {
        char closers[MaxDepth];
        int depth = 1; // the array being split
        const int base = depth;
        for (;;) {
            // Expecting a value.
            skipWhitespace();
            if (atEnd())
                return error(QStringLiteral("expected a value"));
            const char c = m_data[m_pos];
            if (c == '{' || c == '[') {
                if (depth >= MaxDepth)
                    return error(QStringLiteral("nested deeper than %1 levels").arg(MaxDepth));
                const char closer = c == '{' ? '}' : ']';
                closers[depth++] = closer;
                ++m_pos;
                skipWhitespace();
                if (!atEnd() && m_data[m_pos] == closer) {
                    ++m_pos;
                    --depth;
                } else if (closer == '}') {
                    if (!scanMemberName())
                        return false;
                    continue;
                } else {
                    continue;
                }
            } else if (c == '"') {
                if (!scanString())
                    return false;
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                if (!scanNumber())
                    return false;
            } else if (!scanLiteral()) {
                return false;
            }

            // After a value: close containers or move on to the next element.
            for (;;) {
                if (depth == base)
                    return true;
                skipWhitespace();
                if (atEnd())
                    return error(QStringLiteral("expected `,` or `%1`").arg(closers[depth - 1]));
                const char next = m_data[m_pos];
                if (next == closers[depth - 1]) {
                    ++m_pos;
                    --depth;
                    continue;
                }
                if (next != ',')
                    return error(QStringLiteral("expected `,` or `%1`").arg(closers[depth - 1]));
                ++m_pos;
                if (closers[depth - 1] == '}') {
                    skipWhitespace();
                    if (!scanMemberName())
                        return false;
                }
                break;
            }
        }
    }

    // `"name" :` inside an object.
    bool scanMemberName()
    {
        if (atEnd() || m_data[m_pos] != '"')
            return error(QStringLiteral("expected a member name"));
        if (!scanString())
            return false;
        skipWhitespace();
        if (atEnd() || m_data[m_pos] != ':')
            return error(QStringLiteral("expected `:`"));
        ++m_pos;
        return true;
    }

    static bool isHexDigit(char c)
    {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    bool scanString()
    {
        ++m_pos; // opening quote
        while (m_pos < m_size) {
            const auto c = static_cast<unsigned char>(m_data[m_pos]);
            if (c == '"') {
                ++m_pos;
                return true;
            }
            if (c < 0x20)
                return error(QStringLiteral("control character in string"));
            if (c != '\\') {
                ++m_pos;
                continue;
            }
            if (++m_pos >= m_size)
                break;
            switch (m_data[m_pos]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                ++m_pos;
                break;
            case 'u':
                for (int i = 1; i <= 4; ++i) {
                    if (m_pos + i >= m_size || !isHexDigit(m_data[m_pos + i]))
                        return error(QStringLiteral("invalid \\u escape"));
                }
                m_pos += 5;
                break;
            default:
                return error(QStringLiteral("invalid escape"));
            }
        }
        return error(QStringLiteral("unterminated string"));
    }

    bool isDigitAt(qsizetype pos) const
    {
        return pos < m_size && m_data[pos] >= '0' && m_data[pos] <= '9';
    }

    void skipDigits()
    {
        while (isDigitAt(m_pos))
            ++m_pos;
    }

    // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    bool scanNumber()
    {
        if (m_data[m_pos] == '-')
            ++m_pos;
        if (!isDigitAt(m_pos))
            return error(QStringLiteral("invalid number"));
        if (m_data[m_pos++] != '0')
            skipDigits();
        if (m_pos < m_size && m_data[m_pos] == '.') {
            if (!isDigitAt(++m_pos))
                return error(QStringLiteral("invalid number"));
            skipDigits();
        }
        if (m_pos < m_size && (m_data[m_pos] == 'e' || m_data[m_pos] == 'E')) {
            ++m_pos;
            if (m_pos < m_size && (m_data[m_pos] == '+' || m_data[m_pos] == '-'))
                ++m_pos;
            if (!isDigitAt(m_pos))
                return error(QStringLiteral("invalid number"));
            skipDigits();
        }
        return true;
    }

    bool scanLiteral()
    {
        for (const QByteArrayView literal :
             {QByteArrayView("true"), QByteArrayView("false"), QByteArrayView("null")}) {
            if (QByteArrayView(m_data + m_pos, m_size - m_pos).startsWith(literal)) {
                m_pos += literal.size();
                return true;
            }
        }
        return error(QStringLiteral("expected a value"));
    }

    const char *m_data;
    qsizetype m_size;
    qsizetype m_pos = 0;
    QString m_error;
};

// The last checks of both readers, on the fields' UTF-8 bytes.
EnvelopeResult checkedIds(EnvelopeInfo info)
{
    if (info.messageId.size() > MaxNameLength) {
        return EnvelopeResult::failure(
            QStringLiteral("field `message_id` is longer than %1 bytes").arg(MaxNameLength));
    }
    if (!isValidName(info.messageId)) {
        return EnvelopeResult::failure(
            QStringLiteral("field `message_id` must not contain spaces or control characters"));
    }
    return info;
}

} // namespace

Result<EnvelopeInfo> inspectEnvelope(QByteArrayView json)
{
    // Nearly every envelope is a flat object of ASCII strings: read it in one pass without a
    // document (it was an eighth of the broker's CPU per message, bench/README.md).
    if (const std::optional<FlatEnvelope> flat = scanFlatEnvelope(json)) {
        if (flat->messageId.isEmpty())
            return EnvelopeResult::failure(QStringLiteral("field `message_id` must not be empty"));
        EnvelopeInfo info;
        info.messageId = flat->messageId.toByteArray();
        info.receiverClientId = flat->receiverClientId.toByteArray();
        info.ttlMs = flat->ttlMs;
        return checkedIds(std::move(info));
    }
    // fromRawData: parse the caller's bytes in place, no copy of the (up to 1 MiB) envelope.
    QJsonParseError parseError;
    const QJsonDocument document =
        QJsonDocument::fromJson(QByteArray::fromRawData(json.data(), json.size()), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        return EnvelopeResult::failure(
            QStringLiteral("%1 at offset %2").arg(parseError.errorString()).arg(parseError.offset));
    }
    if (!document.isObject())
        return EnvelopeResult::failure(QStringLiteral("invalid type: expected a JSON object"));

    const QJsonObject object = document.object();
    QString messageId;
    QString receiverClientId;
    const struct
    {
        QLatin1StringView name;
        QString *out;
    } requiredFields[] = {
        {QLatin1StringView("message_id"), &messageId},
        {QLatin1StringView("receiver_client_id"), &receiverClientId},
        {QLatin1StringView("enc_session_key"), nullptr},
        {QLatin1StringView("nonce"), nullptr},
        {QLatin1StringView("ciphertext"), nullptr},
    };
    for (const auto &field : requiredFields) {
        if (QString error = takeStringField(object, field.name, field.out); !error.isEmpty())
            return EnvelopeResult::failure(std::move(error));
    }
    const auto sentTime = object.constFind(QLatin1StringView("sent_time"));
    if (sentTime != object.constEnd() && !sentTime->isString())
        return EnvelopeResult::failure(QStringLiteral("field `sent_time` must be a string"));

    // The id is echoed on reply lines ("ACK <id>", "Message: <id> ...") and used as a name in
    // ack/resend requests, so it must be one printable token.
    if (messageId.isEmpty())
        return EnvelopeResult::failure(QStringLiteral("field `message_id` must not be empty"));
    if (!messageId.isValidUtf16()) {
        return EnvelopeResult::failure(
            QStringLiteral("field `message_id` contains an unpaired surrogate"));
    }
    EnvelopeInfo info;
    if (const auto ttl = object.constFind(QLatin1StringView("ttl_ms")); ttl != object.constEnd()) {
        const double value = ttl->toDouble(-1);
        if (!ttl->isDouble() || value < 1 || value > double(MaxEnvelopeTtlMs) ||
            value != double(qint64(value))) {
            return EnvelopeResult::failure(
                QStringLiteral("field `ttl_ms` must be a whole number from 1 to %1")
                    .arg(MaxEnvelopeTtlMs));
        }
        info.ttlMs = qint64(value);
    }
    info.messageId = messageId.toUtf8();
    info.receiverClientId = receiverClientId.toUtf8();
    return checkedIds(std::move(info));
}

Result<QList<QByteArrayView>> splitJsonArray(QByteArrayView json)
{
    return ArrayScanner(json).split();
}

} // namespace cmq::protocol
