// cmq keygen: creates the X25519 key pair a service receives with (its public key is registered
// with the broker by `cmq listen`, `cmq request` and the library's listen()).

#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>

#include "clientsettings.h"
#include "command.h"
#include "crypto/keypair.h"

namespace cmq::cli {
namespace {

const QByteArray Usage =
    "Usage: cmq keygen [--identity DIR] [--force]\n\n"
    "Creates an X25519 key pair in DIR/x25519.key (mode 0600) and DIR/x25519.key.pub and\n"
    "prints the public key (base64). The files have the same format as the existing Python\n"
    "clients' key files.\n\n"
    "Options:\n"
    "  --identity DIR  where to write the key pair ($CMQ_IDENTITY,\n"
    "                  default ~/.local/share/cmq/identity)\n"
    "  --force         replace an existing key pair (messages sealed for the old key can no\n"
    "                  longer be opened)\n\n"
    "Exit status: 0 created, 1 the key pair exists or cannot be written, 2 bad arguments.\n";

int runKeygen(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption identity(QStringLiteral("identity"), QString(), QStringLiteral("dir"));
    const QCommandLineOption force(QStringLiteral("force"), QString());
    parser.addOptions({identity, force});
    if (const int code = parseCommandLine(parser, args, "keygen", Usage); code >= 0)
        return code;
    if (!parser.positionalArguments().isEmpty())
        return fail(
            "keygen",
            QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()),
            ExitUsage);
    const QString dir = parser.isSet(identity) ? parser.value(identity) : defaultIdentityDir();
    const QString path = keyPairPath(dir);
    if (QFileInfo::exists(path) && !parser.isSet(force))
        return fail("keygen", QStringLiteral("%1 exists (use --force to replace it)").arg(path),
                    ExitFailure);
    if (!QDir().mkpath(dir))
        return fail("keygen", QStringLiteral("cannot create %1").arg(dir), ExitFailure);
    QFile::setPermissions(dir, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    const auto keys = crypto::generateKeyPair();
    if (!keys)
        return fail("keygen", keys.error(), ExitFailure);
    if (const Status saved = crypto::saveKeyPair(keys.value(), path); !saved)
        return fail("keygen", saved.error(), ExitFailure);
    writeOut(keys->publicKey.toBase64() + '\n');
    return ExitOk;
}

const CommandRegistration registration({QStringLiteral("keygen"),
                                        QStringLiteral("create the X25519 key pair for receiving"),
                                        &runKeygen});

} // namespace
} // namespace cmq::cli
