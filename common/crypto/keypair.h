#pragma once
// X25519 key pairs for the end-to-end envelope: generated with libsodium and stored the way the
// existing Python clients store theirs (one line of standard base64 per key), so key files can be
// shared between our clients and theirs.

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include "util/result.h"

namespace cmq::crypto {

inline constexpr qsizetype KeySize = 32; // raw X25519 public and secret key size

// Runs sodium_init() once per process (thread-safe); false when libsodium cannot be initialised,
// in which case every function here fails instead of using an uninitialised library.
bool ensureSodium();

struct KeyPair
{
    QByteArray publicKey; // 32 raw bytes, what receivers register (base64) with the broker
    QByteArray secretKey; // 32 raw bytes
};

// A fresh random key pair (crypto_box_keypair).
Result<KeyPair> generateKeyPair();

// Writes the secret key as base64 to `privateKeyPath` (mode 0600, set before any key material is
// written, replaced atomically) and the public key as base64 to `privateKeyPath + ".pub"`.
Status saveKeyPair(const KeyPair &keys, const QString &privateKeyPath);

// Reads a key file written by saveKeyPair (or by the Python clients). Refuses a file that group
// or others may access, as ssh does, and a key that is not 32 bytes. The public key is derived
// from the secret key; when `<path>.pub` exists it must match.
Result<KeyPair> loadKeyPair(const QString &privateKeyPath);

// A receiver's public key as the broker hands it out (standard base64, 32 bytes once decoded).
Result<QByteArray> publicKeyFromBase64(QByteArrayView base64);

} // namespace cmq::crypto
