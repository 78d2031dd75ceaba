#include "keypair.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <sodium.h>

namespace cmq::crypto {

namespace {

// A key file is one line of base64; anything much larger is not a key file and is not read.
constexpr qint64 MaxKeyFileSize = 4096;

// Wipes a buffer that held key material. Only an unshared buffer is wiped: data() on a shared
// QByteArray would detach and wipe a fresh copy while the original lives on.
void wipe(QByteArray &bytes)
{
    if (!bytes.isEmpty() && bytes.isDetached())
        sodium_memzero(bytes.data(), size_t(bytes.size()));
    bytes.clear();
}

// The permission bits as the octal mode ls and chmod show.
QString octalMode(QFileDevice::Permissions permissions)
{
    const uint bits = uint(permissions.toInt());
    const uint mode = (((bits >> 12) & 7) << 6) | (((bits >> 4) & 7) << 3) | (bits & 7);
    return QStringLiteral("%1").arg(mode, 4, 8, QLatin1Char('0'));
}

// Writes a whole file through a temporary, so a reader never sees half a key and a crash never
// leaves one. Permissions go on the temporary before the content does.
Status writeFileAtomically(const QString &path, QByteArrayView content,
                           QFileDevice::Permissions permissions)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return failure(QStringLiteral("cannot create %1: %2").arg(path, file.errorString()));
    if (!file.setPermissions(permissions)) {
        const QString error = file.errorString();
        file.cancelWriting();
        return failure(QStringLiteral("cannot set the permissions of %1: %2").arg(path, error));
    }
    if (file.write(content.data(), content.size()) != content.size()) {
        const QString error = file.errorString();
        file.cancelWriting();
        return failure(QStringLiteral("cannot write %1: %2").arg(path, error));
    }
    if (!file.commit())
        return failure(QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));
    return success();
}

// Standard base64 with padding (surrounding whitespace allowed, as key files end in a newline)
// of exactly KeySize bytes; `what` names the key in errors.
Result<QByteArray> decodeKey(QByteArrayView base64, const QString &what)
{
    const QByteArrayView text = base64.trimmed();
    QByteArray copy = text.toByteArray();
    auto decoded = QByteArray::fromBase64Encoding(copy, QByteArray::AbortOnBase64DecodingErrors);
    wipe(copy);
    if (!decoded || text.size() % 4 != 0)
        return Result<QByteArray>::failure(QStringLiteral("%1 is not valid base64").arg(what));
    if (decoded.decoded.size() != KeySize) {
        const qsizetype size = decoded.decoded.size();
        wipe(decoded.decoded);
        return Result<QByteArray>::failure(
            QStringLiteral("%1 has %2 bytes, expected %3").arg(what).arg(size).arg(KeySize));
    }
    return std::move(decoded.decoded);
}

} // namespace

bool ensureSodium()
{
    // A function-local static is initialised exactly once even with concurrent callers.
    static const bool initialised = sodium_init() >= 0;
    return initialised;
}

Result<KeyPair> generateKeyPair()
{
    if (!ensureSodium())
        return Result<KeyPair>::failure(QStringLiteral("libsodium could not be initialised"));
    KeyPair keys;
    keys.publicKey.resize(crypto_box_PUBLICKEYBYTES);
    keys.secretKey.resize(crypto_box_SECRETKEYBYTES);
    if (crypto_box_keypair(reinterpret_cast<unsigned char *>(keys.publicKey.data()),
                           reinterpret_cast<unsigned char *>(keys.secretKey.data())) != 0) {
        wipe(keys.secretKey);
        return Result<KeyPair>::failure(QStringLiteral("key pair generation failed"));
    }
    return keys;
}

Status saveKeyPair(const KeyPair &keys, const QString &privateKeyPath)
{
    if (keys.publicKey.size() != KeySize || keys.secretKey.size() != KeySize)
        return failure(
            QStringLiteral("cannot save a key pair whose keys are not %1 bytes").arg(KeySize));

    QByteArray secretText = keys.secretKey.toBase64() + '\n';
    const Status secretWritten = writeFileAtomically(
        privateKeyPath, secretText, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    wipe(secretText);
    if (!secretWritten)
        return secretWritten;

    const auto publicPermissions = QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                   QFileDevice::ReadGroup | QFileDevice::ReadOther;
    return writeFileAtomically(privateKeyPath + QStringLiteral(".pub"),
                               keys.publicKey.toBase64() + '\n', publicPermissions);
}

Result<KeyPair> loadKeyPair(const QString &privateKeyPath)
{
    if (!ensureSodium())
        return Result<KeyPair>::failure(QStringLiteral("libsodium could not be initialised"));

    const QFileInfo info(privateKeyPath);
    if (!info.exists())
        return Result<KeyPair>::failure(
            QStringLiteral("private key file %1 does not exist").arg(privateKeyPath));

    // As ssh does: a key others can read may already be compromised, so refuse it outright
    // rather than use it and hide the problem.
    const auto tooOpen = QFileDevice::ReadGroup | QFileDevice::WriteGroup | QFileDevice::ExeGroup |
                         QFileDevice::ReadOther | QFileDevice::WriteOther | QFileDevice::ExeOther;
    const QFileDevice::Permissions permissions = info.permissions();
    if (permissions & tooOpen)
        return Result<KeyPair>::failure(
            QStringLiteral("permissions %1 for private key file %2 are too open: it must not be "
                           "accessible by group or others (chmod 600 %2)")
                .arg(octalMode(permissions), privateKeyPath));

    QFile file(privateKeyPath);
    if (!file.open(QIODevice::ReadOnly))
        return Result<KeyPair>::failure(
            QStringLiteral("cannot read %1: %2").arg(privateKeyPath, file.errorString()));
    if (file.size() > MaxKeyFileSize)
        return Result<KeyPair>::failure(
            QStringLiteral("%1 is too large to be a private key file").arg(privateKeyPath));
    QByteArray text = file.read(MaxKeyFileSize + 1);
    file.close();
    auto secret = decodeKey(text, QStringLiteral("the private key in %1").arg(privateKeyPath));
    wipe(text);
    if (!secret)
        return Result<KeyPair>::failure(secret.error());

    KeyPair keys;
    keys.secretKey = std::move(secret).value();
    keys.publicKey.resize(crypto_scalarmult_BYTES);
    if (crypto_scalarmult_base(
            reinterpret_cast<unsigned char *>(keys.publicKey.data()),
            reinterpret_cast<const unsigned char *>(keys.secretKey.constData())) != 0) {
        wipe(keys.secretKey);
        return Result<KeyPair>::failure(
            QStringLiteral("the private key in %1 is not usable").arg(privateKeyPath));
    }

    // A stale .pub next to a replaced key would make us register one key and decrypt with
    // another; catch the mix-up here instead of as undecryptable messages later.
    QFile publicFile(privateKeyPath + QStringLiteral(".pub"));
    if (publicFile.exists()) {
        if (!publicFile.open(QIODevice::ReadOnly)) {
            wipe(keys.secretKey);
            return Result<KeyPair>::failure(
                QStringLiteral("cannot read %1: %2")
                    .arg(publicFile.fileName(), publicFile.errorString()));
        }
        const auto stored =
            decodeKey(publicFile.read(MaxKeyFileSize),
                      QStringLiteral("the public key in %1").arg(publicFile.fileName()));
        if (!stored || stored.value() != keys.publicKey) {
            wipe(keys.secretKey);
            return Result<KeyPair>::failure(
                stored ? QStringLiteral("the public key in %1 does not belong to the private "
                                        "key in %2")
                             .arg(publicFile.fileName(), privateKeyPath)
                       : stored.error());
        }
    }
    return keys;
}

Result<QByteArray> publicKeyFromBase64(QByteArrayView base64)
{
    return decodeKey(base64, QStringLiteral("the public key"));
}

} // namespace cmq::crypto
