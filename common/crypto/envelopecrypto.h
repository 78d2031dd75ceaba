#pragma once
// The end-to-end envelope of the existing CipherMQ clients: the body is ChaCha20-Poly1305 (IETF)
// under a random session key, the session key is sealed (crypto_box_seal) to the receiver's
// X25519 public key. Only clients use this; the broker forwards envelopes without opening them.

#include <QByteArray>
#include <QByteArrayView>
#include <QDateTime>
#include <QJsonObject>
#include <QString>

#include "crypto/keypair.h"
#include "util/result.h"

namespace cmq::crypto {

inline constexpr qsizetype SessionKeySize = 32;
inline constexpr qsizetype NonceSize = 12;
inline constexpr qsizetype SealOverhead = 48; // crypto_box_SEALBYTES
inline constexpr qsizetype TagSize = 16;      // Poly1305 tag appended to the ciphertext

// The three binary fields of an envelope, each as standard base64 text (with padding).
struct SealedEnvelope
{
    QByteArray encSessionKey; // sealed session key, 80 bytes once decoded
    QByteArray nonce;         // 12 bytes once decoded
    QByteArray ciphertext;    // body ciphertext followed by its 16-byte tag
    // The body is padded to a size bucket (crypto/padding.h; the envelope's `padding` field).
    // The flag is bound into the body's authentication (additional data), so a padded body
    // never opens as unpadded or the other way round, whoever adds or strips the field.
    bool padded = false;
};

enum class Padding { None, Buckets };

// Encrypts `plaintext` for the holder of `receiverPublicKey` (32 raw bytes) with a fresh random
// session key and nonce; Padding::Buckets pads it to its size bucket first.
Result<SealedEnvelope> seal(QByteArrayView plaintext, QByteArrayView receiverPublicKey,
                            Padding padding = Padding::None);

// Decrypts an envelope with the receiver's key pair. The error says which step failed: a field
// that is not base64, a field of the wrong size, a session key that does not open (another
// receiver's envelope, or enc_session_key altered), or a body that fails authentication
// (ciphertext or nonce altered, or the padding field added or removed). A padded body comes
// back without its padding.
Result<QByteArray> open(const SealedEnvelope &envelope, const KeyPair &receiver);

struct ParsedEnvelope
{
    QString messageId;
    QString receiverClientId;
    SealedEnvelope sealed;
    QString sentTimeText;    // the sent_time field verbatim; empty when absent
    QDateTime sentTime;      // sentTimeText parsed; invalid when absent or not RFC 3339
    QJsonObject extraFields; // every other field, untouched
};

// The envelope as one line of compact JSON: message_id, receiver_client_id, enc_session_key,
// nonce, ciphertext, sent_time (RFC 3339, UTC, milliseconds; left out when `sentTime` is invalid),
// padding (only for a padded body), then `extraFields` in key order. Extra fields named like a
// standard field are ignored.
QByteArray buildEnvelopeJson(const QString &messageId, const QString &receiverClientId,
                             const SealedEnvelope &sealed, const QDateTime &sentTime,
                             const QJsonObject &extraFields = {});

// Reads envelope JSON: one object whose message_id (not empty), receiver_client_id,
// enc_session_key, nonce and ciphertext are strings, and whose sent_time, when present, is a
// string, and whose padding, when present, names the scheme this library writes. Does not decode
// or check the base64 fields; open() does.
Result<ParsedEnvelope> parseEnvelopeJson(QByteArrayView json);

} // namespace cmq::crypto
