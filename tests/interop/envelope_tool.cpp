// Command-line access to the client envelope code, for the interop test against the existing
// clients' Python cryptography:
//   envelope_tool keygen DIR            writes DIR/private.key (+ .pub), prints the public key
//   envelope_tool seal PUBKEY_B64       plaintext on stdin, envelope JSON on stdout
//   envelope_tool open DIR              envelope JSON on stdin, plaintext on stdout

#include <cstdio>

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QUuid>

#include "crypto/envelopecrypto.h"
#include "crypto/keypair.h"

using namespace cmq::crypto;

namespace {

QString keyPath(const char *dir)
{
    return QDir(QString::fromLocal8Bit(dir)).filePath(QStringLiteral("private.key"));
}

int fail(const QString &error)
{
    std::fprintf(stderr, "envelope_tool: %s\n", qPrintable(error));
    return 1;
}

QByteArray readStdin()
{
    QFile in;
    if (!in.open(stdin, QIODevice::ReadOnly))
        return {};
    return in.readAll();
}

bool writeStdout(const QByteArray &data)
{
    QFile out;
    return out.open(stdout, QIODevice::WriteOnly) && out.write(data) == data.size() && out.flush();
}

int keygen(const char *dir)
{
    if (!QDir().mkpath(QString::fromLocal8Bit(dir)))
        return fail(QStringLiteral("cannot create %1").arg(QString::fromLocal8Bit(dir)));
    const auto keys = generateKeyPair();
    if (!keys)
        return fail(keys.error());
    if (const auto saved = saveKeyPair(keys.value(), keyPath(dir)); !saved)
        return fail(saved.error());
    return writeStdout(keys->publicKey.toBase64() + '\n') ? 0 : 1;
}

int sealStdin(const char *publicKeyBase64, Padding padding)
{
    const auto publicKey = publicKeyFromBase64(publicKeyBase64);
    if (!publicKey)
        return fail(publicKey.error());
    const auto sealed = seal(readStdin(), publicKey.value(), padding);
    if (!sealed)
        return fail(sealed.error());
    const QString correlationId = QUuid::createUuid().toString(QUuid::WithoutBraces).left(8);
    // An extra field, as the existing senders add routing_key, to show it survives.
    const QJsonObject extras{{QStringLiteral("routing_key"), QStringLiteral("interop_key")}};
    const QByteArray json = buildEnvelopeJson(
        QStringLiteral("envelope_tool-%1-interop").arg(correlationId), QStringLiteral("interop"),
        sealed.value(), QDateTime::currentDateTimeUtc(), extras);
    return writeStdout(json + '\n') ? 0 : 1;
}

int openStdin(const char *dir)
{
    const auto keys = loadKeyPair(keyPath(dir));
    if (!keys)
        return fail(keys.error());
    const auto parsed = parseEnvelopeJson(readStdin().trimmed());
    if (!parsed)
        return fail(QStringLiteral("invalid envelope: %1").arg(parsed.error()));
    const auto plaintext = open(parsed->sealed, keys.value());
    if (!plaintext)
        return fail(plaintext.error());
    return writeStdout(plaintext.value()) ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
    const QByteArray command = argc == 3 ? QByteArray(argv[1]) : QByteArray();
    if (command == "keygen")
        return keygen(argv[2]);
    if (command == "seal")
        return sealStdin(argv[2], Padding::None);
    if (command == "seal-padded")
        return sealStdin(argv[2], Padding::Buckets);
    if (command == "open")
        return openStdin(argv[2]);
    std::fprintf(
        stderr,
        "usage: envelope_tool keygen DIR | seal PUBKEY_B64 | seal-padded PUBKEY_B64 | open DIR\n");
    return 2;
}
