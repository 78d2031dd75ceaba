#include "envelopecrypto.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QJsonValue>

#include <sodium.h>

#include "crypto/padding.h"

namespace cmq::crypto {

static_assert(SessionKeySize == crypto_aead_chacha20poly1305_ietf_KEYBYTES);
static_assert(NonceSize == crypto_aead_chacha20poly1305_ietf_NPUBBYTES);
static_assert(TagSize == crypto_aead_chacha20poly1305_ietf_ABYTES);
static_assert(SealOverhead == crypto_box_SEALBYTES);
static_assert(KeySize == crypto_box_PUBLICKEYBYTES && KeySize == crypto_box_SECRETKEYBYTES);

namespace {

const QLatin1StringView MessageIdKey("message_id");
const QLatin1StringView ReceiverClientIdKey("receiver_client_id");
const QLatin1StringView EncSessionKeyKey("enc_session_key");
const QLatin1StringView NonceKey("nonce");
const QLatin1StringView CiphertextKey("ciphertext");
const QLatin1StringView SentTimeKey("sent_time");
const QLatin1StringView PaddingKey("padding");
// The one padding scheme: crypto/padding.h's buckets. It is also the body's additional data.
const QLatin1StringView BucketPadding("buckets-v1");

bool isStandardField(const QString &key)
{
    return key == MessageIdKey || key == ReceiverClientIdKey || key == EncSessionKeyKey ||
           key == NonceKey || key == CiphertextKey || key == SentTimeKey || key == PaddingKey;
}

const unsigned char *bytes(QByteArrayView view)
{
    // libsodium is handed a valid pointer even for an empty (possibly null) view.
    static const unsigned char empty = 0;
    return view.isEmpty() ? &empty : reinterpret_cast<const unsigned char *>(view.data());
}

unsigned char *bytes(QByteArray &array)
{
    return reinterpret_cast<unsigned char *>(array.data());
}

// Standard base64 with padding, as the other clients write it and require it (Python's
// b64decode refuses missing padding; Qt alone would accept it).
Result<QByteArray> decodeField(const QByteArray &base64, QLatin1StringView name)
{
    auto decoded = QByteArray::fromBase64Encoding(base64, QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || base64.size() % 4 != 0)
        return Result<QByteArray>::failure(QStringLiteral("%1 is not valid base64").arg(name));
    return std::move(decoded.decoded);
}

// One JSON value in compact form. QJsonDocument only serialises arrays and objects, so the
// value is wrapped in an array and the brackets are cut off again.
QByteArray compactJson(const QJsonValue &value)
{
    const QByteArray array = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
    return array.mid(1, array.size() - 2);
}

void appendField(QByteArray &json, QLatin1StringView key, const QJsonValue &value)
{
    if (json.size() > 1)
        json += ',';
    json += compactJson(QString(key));
    json += ':';
    json += compactJson(value);
}

Result<QString> stringField(const QJsonObject &object, QLatin1StringView key)
{
    const auto it = object.constFind(key);
    if (it == object.constEnd())
        return Result<QString>::failure(QStringLiteral("missing field %1").arg(key));
    if (!it->isString())
        return Result<QString>::failure(QStringLiteral("field %1 is not a string").arg(key));
    return it->toString();
}

} // namespace

// What the body's authentication covers besides the ciphertext: nothing for an unpadded body
// (the existing clients' form), the scheme's name for a padded one.
static QByteArrayView additionalData(bool padded)
{
    static const QByteArray scheme = QByteArray(BucketPadding.data(), BucketPadding.size());
    return padded ? QByteArrayView(scheme) : QByteArrayView();
}

Result<SealedEnvelope> seal(QByteArrayView plaintext, QByteArrayView receiverPublicKey,
                            Padding padding)
{
    if (!ensureSodium())
        return Result<SealedEnvelope>::failure(
            QStringLiteral("libsodium could not be initialised"));
    if (receiverPublicKey.size() != KeySize)
        return Result<SealedEnvelope>::failure(
            QStringLiteral("the receiver public key has %1 bytes, expected %2")
                .arg(receiverPublicKey.size())
                .arg(KeySize));
    if (quint64(plaintext.size()) > crypto_aead_chacha20poly1305_ietf_MESSAGEBYTES_MAX)
        return Result<SealedEnvelope>::failure(QStringLiteral("the message is too large"));
    const bool padded = padding == Padding::Buckets;
    const QByteArray paddedBody = padded ? pad(plaintext) : QByteArray();
    const QByteArrayView body = padded ? QByteArrayView(paddedBody) : plaintext;
    const QByteArrayView ad = additionalData(padded);

    unsigned char sessionKey[SessionKeySize];
    crypto_aead_chacha20poly1305_ietf_keygen(sessionKey);
    QByteArray nonce(NonceSize, Qt::Uninitialized);
    randombytes_buf(nonce.data(), size_t(nonce.size()));

    QByteArray sealedKey(SessionKeySize + SealOverhead, Qt::Uninitialized);
    if (crypto_box_seal(bytes(sealedKey), sessionKey, sizeof sessionKey,
                        bytes(receiverPublicKey)) != 0) {
        sodium_memzero(sessionKey, sizeof sessionKey);
        return Result<SealedEnvelope>::failure(
            QStringLiteral("the session key could not be sealed to the receiver public key"));
    }

    QByteArray ciphertext(body.size() + TagSize, Qt::Uninitialized);
    unsigned long long ciphertextSize = 0;
    crypto_aead_chacha20poly1305_ietf_encrypt(bytes(ciphertext), &ciphertextSize, bytes(body),
                                              quint64(body.size()), bytes(ad), quint64(ad.size()),
                                              nullptr, bytes(nonce), sessionKey);
    sodium_memzero(sessionKey, sizeof sessionKey);
    Q_ASSERT(ciphertextSize == quint64(ciphertext.size()));

    return SealedEnvelope{sealedKey.toBase64(), nonce.toBase64(), ciphertext.toBase64(), padded};
}

Result<QByteArray> open(const SealedEnvelope &envelope, const KeyPair &receiver)
{
    if (!ensureSodium())
        return Result<QByteArray>::failure(QStringLiteral("libsodium could not be initialised"));
    if (receiver.publicKey.size() != KeySize || receiver.secretKey.size() != KeySize)
        return Result<QByteArray>::failure(
            QStringLiteral("the receiver key pair is not two %1-byte keys").arg(KeySize));

    const auto sealedKey = decodeField(envelope.encSessionKey, EncSessionKeyKey);
    if (!sealedKey)
        return Result<QByteArray>::failure(sealedKey.error());
    const auto nonce = decodeField(envelope.nonce, NonceKey);
    if (!nonce)
        return Result<QByteArray>::failure(nonce.error());
    const auto ciphertext = decodeField(envelope.ciphertext, CiphertextKey);
    if (!ciphertext)
        return Result<QByteArray>::failure(ciphertext.error());

    if (sealedKey->size() != SessionKeySize + SealOverhead)
        return Result<QByteArray>::failure(QStringLiteral("%1 has %2 bytes, expected %3")
                                               .arg(EncSessionKeyKey)
                                               .arg(sealedKey->size())
                                               .arg(SessionKeySize + SealOverhead));
    if (nonce->size() != NonceSize)
        return Result<QByteArray>::failure(QStringLiteral("%1 has %2 bytes, expected %3")
                                               .arg(NonceKey)
                                               .arg(nonce->size())
                                               .arg(NonceSize));
    if (ciphertext->size() < TagSize)
        return Result<QByteArray>::failure(
            QStringLiteral("%1 has %2 bytes, fewer than its %3-byte authentication tag")
                .arg(CiphertextKey)
                .arg(ciphertext->size())
                .arg(TagSize));

    unsigned char sessionKey[SessionKeySize];
    if (crypto_box_seal_open(sessionKey, bytes(sealedKey.value()), quint64(sealedKey->size()),
                             bytes(receiver.publicKey), bytes(receiver.secretKey)) != 0) {
        sodium_memzero(sessionKey, sizeof sessionKey);
        return Result<QByteArray>::failure(
            QStringLiteral("the session key does not open with this key pair: the envelope is "
                           "for another receiver or enc_session_key was altered"));
    }

    QByteArray plaintext(ciphertext->size() - TagSize, Qt::Uninitialized);
    unsigned long long plaintextSize = 0;
    const QByteArrayView ad = additionalData(envelope.padded);
    const int opened = crypto_aead_chacha20poly1305_ietf_decrypt(
        bytes(plaintext), &plaintextSize, nullptr, bytes(ciphertext.value()),
        quint64(ciphertext->size()), bytes(ad), quint64(ad.size()), bytes(nonce.value()),
        sessionKey);
    sodium_memzero(sessionKey, sizeof sessionKey);
    if (opened != 0)
        return Result<QByteArray>::failure(
            QStringLiteral("the message body failed authentication: ciphertext, nonce or padding "
                           "field was altered"));
    Q_ASSERT(plaintextSize == quint64(plaintext.size()));
    if (envelope.padded)
        return unpad(plaintext);
    return plaintext;
}

QByteArray buildEnvelopeJson(const QString &messageId, const QString &receiverClientId,
                             const SealedEnvelope &sealed, const QDateTime &sentTime,
                             const QJsonObject &extraFields)
{
    // Written by hand because QJsonObject sorts its keys, and the existing clients' field order
    // is kept so that our envelopes read the same as theirs in logs and captures.
    QByteArray json = "{";
    appendField(json, MessageIdKey, messageId);
    appendField(json, ReceiverClientIdKey, receiverClientId);
    appendField(json, EncSessionKeyKey, QString::fromLatin1(sealed.encSessionKey));
    appendField(json, NonceKey, QString::fromLatin1(sealed.nonce));
    appendField(json, CiphertextKey, QString::fromLatin1(sealed.ciphertext));
    if (sentTime.isValid())
        appendField(json, SentTimeKey, sentTime.toUTC().toString(Qt::ISODateWithMs));
    if (sealed.padded)
        appendField(json, PaddingKey, QString(BucketPadding));
    for (auto it = extraFields.constBegin(); it != extraFields.constEnd(); ++it) {
        if (isStandardField(it.key()))
            continue;
        json += ',';
        json += compactJson(it.key());
        json += ':';
        json += compactJson(it.value());
    }
    json += '}';
    return json;
}

Result<ParsedEnvelope> parseEnvelopeJson(QByteArrayView json)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json.toByteArray(), &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return Result<ParsedEnvelope>::failure(QStringLiteral("not valid JSON: %1 at offset %2")
                                                   .arg(parseError.errorString())
                                                   .arg(parseError.offset));
    if (!document.isObject())
        return Result<ParsedEnvelope>::failure(QStringLiteral("not a JSON object"));
    const QJsonObject object = document.object();

    ParsedEnvelope parsed;
    QString error;
    // Reads a required string field into `out`; false, with `error` set, when it is not one.
    const auto take = [&](QLatin1StringView key, QString &out) {
        auto value = stringField(object, key);
        if (!value) {
            error = value.error();
            return false;
        }
        out = std::move(value).value();
        return true;
    };
    QString encSessionKey;
    QString nonce;
    QString ciphertext;
    if (!take(MessageIdKey, parsed.messageId) ||
        !take(ReceiverClientIdKey, parsed.receiverClientId) ||
        !take(EncSessionKeyKey, encSessionKey) || !take(NonceKey, nonce) ||
        !take(CiphertextKey, ciphertext))
        return Result<ParsedEnvelope>::failure(error);
    if (parsed.messageId.isEmpty())
        return Result<ParsedEnvelope>::failure(QStringLiteral("field message_id is empty"));
    // Base64 is ASCII; anything else is kept as UTF-8 so that open() reports it as bad base64.
    parsed.sealed = {encSessionKey.toUtf8(), nonce.toUtf8(), ciphertext.toUtf8()};

    if (object.contains(SentTimeKey)) {
        auto sentTime = stringField(object, SentTimeKey);
        if (!sentTime)
            return Result<ParsedEnvelope>::failure(sentTime.error());
        parsed.sentTimeText = std::move(sentTime).value();
        // RFC 3339 requires an offset; a time without one would silently be read as local time.
        const QDateTime time = QDateTime::fromString(parsed.sentTimeText, Qt::ISODateWithMs);
        if (time.isValid() && time.timeSpec() != Qt::LocalTime)
            parsed.sentTime = time.toUTC();
    }

    if (object.contains(PaddingKey)) {
        auto scheme = stringField(object, PaddingKey);
        if (!scheme)
            return Result<ParsedEnvelope>::failure(scheme.error());
        if (scheme.value() != BucketPadding)
            return Result<ParsedEnvelope>::failure(
                QStringLiteral("unknown padding scheme '%1' (this client reads '%2')")
                    .arg(scheme.value(), BucketPadding));
        parsed.sealed.padded = true;
    }

    for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
        if (!isStandardField(it.key()))
            parsed.extraFields.insert(it.key(), it.value());
    }
    return parsed;
}

} // namespace cmq::crypto
