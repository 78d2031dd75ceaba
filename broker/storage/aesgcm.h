#pragma once
// AES-256-GCM sealing of small secrets at rest (public keys in the key directory), via OpenSSL
// EVP: a fresh random 96-bit nonce per seal and a 128-bit tag. The associated data binds a sealed
// value to its row (the client id), so a ciphertext moved to another row fails to open.

#include <QByteArray>

#include "util/result.h"

namespace cmq::storage {

struct SealedBox
{
    QByteArray ciphertext;
    QByteArray nonce; // 12 bytes
    QByteArray tag;   // 16 bytes
};

namespace aesgcm {

constexpr int KeySize = 32;
constexpr int NonceSize = 12;
constexpr int TagSize = 16;

Result<SealedBox> seal(const QByteArray &key, const QByteArray &plaintext,
                       const QByteArray &associatedData);

// Fails (never returns unauthenticated bytes) when the key, nonce, tag, associated data or
// ciphertext do not match what seal() produced.
Result<QByteArray> open(const QByteArray &key, const SealedBox &box,
                        const QByteArray &associatedData);

} // namespace aesgcm
} // namespace cmq::storage
