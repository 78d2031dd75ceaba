#include "aesgcm.h"

#include <memory>

#include <openssl/evp.h>
#include <openssl/rand.h>

namespace cmq::storage::aesgcm {

namespace {

using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

CipherContext newContext()
{
    return CipherContext(EVP_CIPHER_CTX_new(), &EVP_CIPHER_CTX_free);
}

const unsigned char *bytes(const QByteArray &data)
{
    return reinterpret_cast<const unsigned char *>(data.constData());
}

unsigned char *bytes(QByteArray &data)
{
    return reinterpret_cast<unsigned char *>(data.data());
}

} // namespace

Result<SealedBox> seal(const QByteArray &key, const QByteArray &plaintext,
                       const QByteArray &associatedData)
{
    if (key.size() != KeySize)
        return Result<SealedBox>::failure(QStringLiteral("AES-256-GCM key must be 32 bytes"));

    SealedBox box;
    box.nonce.resize(NonceSize);
    if (RAND_bytes(bytes(box.nonce), NonceSize) != 1)
        return Result<SealedBox>::failure(QStringLiteral("cannot draw a random nonce"));

    CipherContext ctx = newContext();
    int length = 0;
    box.ciphertext.resize(plaintext.size());
    box.tag.resize(TagSize);
    const bool ok =
        ctx && EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, NonceSize, nullptr) == 1 &&
        EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, bytes(key), bytes(box.nonce)) == 1 &&
        EVP_EncryptUpdate(ctx.get(), nullptr, &length, bytes(associatedData),
                          int(associatedData.size())) == 1 &&
        EVP_EncryptUpdate(ctx.get(), bytes(box.ciphertext), &length, bytes(plaintext),
                          int(plaintext.size())) == 1 &&
        EVP_EncryptFinal_ex(ctx.get(), bytes(box.ciphertext) + length, &length) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, TagSize, bytes(box.tag)) == 1;
    if (!ok)
        return Result<SealedBox>::failure(QStringLiteral("AES-256-GCM encryption failed"));
    return box;
}

Result<QByteArray> open(const QByteArray &key, const SealedBox &box,
                        const QByteArray &associatedData)
{
    if (key.size() != KeySize || box.nonce.size() != NonceSize || box.tag.size() != TagSize)
        return Result<QByteArray>::failure(QStringLiteral("malformed AES-256-GCM parameters"));

    CipherContext ctx = newContext();
    QByteArray plaintext(box.ciphertext.size(), Qt::Uninitialized);
    QByteArray tag = box.tag; // EVP wants a non-const pointer for the expected tag
    int length = 0;
    const bool ok =
        ctx && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, NonceSize, nullptr) == 1 &&
        EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, bytes(key), bytes(box.nonce)) == 1 &&
        EVP_DecryptUpdate(ctx.get(), nullptr, &length, bytes(associatedData),
                          int(associatedData.size())) == 1 &&
        EVP_DecryptUpdate(ctx.get(), bytes(plaintext), &length, bytes(box.ciphertext),
                          int(box.ciphertext.size())) == 1 &&
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, TagSize, bytes(tag)) == 1
        // The tag is checked here; on mismatch nothing decrypted may be used.
        && EVP_DecryptFinal_ex(ctx.get(), bytes(plaintext) + length, &length) == 1;
    if (!ok)
        return Result<QByteArray>::failure(QStringLiteral("AES-256-GCM authentication failed"));
    return plaintext;
}

} // namespace cmq::storage::aesgcm
