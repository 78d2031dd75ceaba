#pragma once
// The key directory's SQL: public keys sealed with AES-256-GCM under encryption.aes_key, with
// ciphertext, nonce and tag in separate base64 columns as in the seed.

#include <optional>

#include <QByteArray>
#include <QString>

#include "sqlsession.h"
#include "util/result.h"

namespace cmq::storage {

Status savePublicKey(SqlSession &session, const QByteArray &aesKey, const QString &clientId,
                     const QByteArray &publicKey);

// No row gives an empty optional; a row that does not open under `aesKey` is an error, never
// bytes.
Result<std::optional<QByteArray>> loadPublicKey(SqlSession &session, const QByteArray &aesKey,
                                                const QString &clientId);

} // namespace cmq::storage
