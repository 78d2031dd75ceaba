#include "protocol/flatenvelope.h"

#include "protocol/envelope.h"

namespace cmq::protocol {

namespace {

// One pass over the bytes; any doubt ends it with nullopt (the caller then parses for real).
class FlatScanner
{
public:
    explicit FlatScanner(QByteArrayView json)
        : m_at(json.data()), m_end(json.data() + json.size())
    {
    }

    std::optional<FlatEnvelope> scan()
    {
        skipSpace();
        if (!take('{'))
            return std::nullopt;
        skipSpace();
        if (!take('}')) {
            do {
                if (!member())
                    return std::nullopt;
            } while (take(','));
            if (!take('}'))
                return std::nullopt;
        }
        skipSpace();
        constexpr unsigned required = MessageId | Receiver | SessionKey | Nonce | Ciphertext;
        if (m_at != m_end || (m_seen & required) != required)
            return std::nullopt;
        return m_fields;
    }

private:
    enum Field : unsigned {
        MessageId = 1,
        Receiver = 2,
        SessionKey = 4,
        Nonce = 8,
        Ciphertext = 16,
        SentTime = 32,
        Ttl = 64,
        Other = 0,
    };

    void skipSpace()
    {
        while (m_at != m_end && (*m_at == ' ' || *m_at == '\t' || *m_at == '\n' || *m_at == '\r'))
            ++m_at;
    }
    bool take(char c)
    {
        skipSpace();
        if (m_at == m_end || *m_at != c)
            return false;
        ++m_at;
        return true;
    }

    // A string of printable ASCII without escapes; its bytes between the quotes.
    std::optional<QByteArrayView> string()
    {
        if (!take('"'))
            return std::nullopt;
        const char *start = m_at;
        while (m_at != m_end && *m_at != '"') {
            const unsigned char c = static_cast<unsigned char>(*m_at);
            if (c < 0x20 || c > 0x7e || c == '\\')
                return std::nullopt;
            ++m_at;
        }
        if (m_at == m_end)
            return std::nullopt;
        return QByteArrayView(start, m_at++ - start);
    }

    // -?[1-9][0-9]{0,14} or 0: exact as a double too, so Qt reads the same value.
    std::optional<qint64> integer()
    {
        const bool negative = m_at != m_end && *m_at == '-';
        if (negative)
            ++m_at;
        const char *start = m_at;
        qint64 value = 0;
        while (m_at != m_end && *m_at >= '0' && *m_at <= '9') {
            if (m_at - start == 15)
                return std::nullopt; // a 16th digit
            value = value * 10 + (*m_at++ - '0');
        }
        const auto digits = m_at - start;
        if (digits == 0 || (digits > 1 && *start == '0'))
            return std::nullopt;
        if (m_at != m_end && (*m_at == '.' || *m_at == 'e' || *m_at == 'E'))
            return std::nullopt;
        return negative ? -value : value;
    }

    bool literal(QByteArrayView word)
    {
        if (m_end - m_at < word.size() || QByteArrayView(m_at, word.size()) != word)
            return false;
        m_at += word.size();
        return true;
    }

    static Field fieldNamed(QByteArrayView name)
    {
        if (name == "message_id")
            return MessageId;
        if (name == "receiver_client_id")
            return Receiver;
        if (name == "enc_session_key")
            return SessionKey;
        if (name == "nonce")
            return Nonce;
        if (name == "ciphertext")
            return Ciphertext;
        if (name == "sent_time")
            return SentTime;
        if (name == "ttl_ms")
            return Ttl;
        return Other;
    }

    bool member()
    {
        const std::optional<QByteArrayView> name = string();
        if (!name || !take(':'))
            return false;
        const Field field = fieldNamed(*name);
        if (field != Other && (m_seen & field))
            return false; // which one QJsonDocument keeps is its business
        m_seen |= field;
        skipSpace();
        if (m_at == m_end)
            return false;
        if (*m_at == '"') {
            const std::optional<QByteArrayView> value = string();
            if (!value || field == Ttl)
                return false;
            if (field == MessageId)
                m_fields.messageId = *value;
            else if (field == Receiver)
                m_fields.receiverClientId = *value;
            return true;
        }
        if (field != Other && field != Ttl)
            return false; // the named fields are strings; the error text is QJsonDocument's
        if (*m_at == '-' || (*m_at >= '0' && *m_at <= '9')) {
            const std::optional<qint64> value = integer();
            if (!value)
                return false;
            if (field == Ttl) {
                if (*value < 1 || *value > MaxEnvelopeTtlMs)
                    return false;
                m_fields.ttlMs = *value;
            }
            return true;
        }
        return field == Other && (literal("true") || literal("false") || literal("null"));
    }

    const char *m_at;
    const char *m_end;
    unsigned m_seen = 0;
    FlatEnvelope m_fields;
};

} // namespace

std::optional<FlatEnvelope> scanFlatEnvelope(QByteArrayView json)
{
    return FlatScanner(json).scan();
}

} // namespace cmq::protocol
