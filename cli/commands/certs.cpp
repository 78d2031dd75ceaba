// cmq certs: a private CA and the broker and client certificates signed by it, written as PEM
// files an operator can hand to ciphermq-broker ([tls]) and to clients. The work is done by
// tls/certgen.h; this file is argument handling, file placement and the next-step hints.

#include <cstdio>
#include <optional>
#include <sys/stat.h>
#include <utility>

#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "command.h"
#include "tls/certgen.h"
#include "util/atomicfile.h"

namespace cmq::cli {
namespace {

using tls::CertificateRole;

constexpr mode_t privateKeyMode = 0600;
constexpr mode_t certificateMode = 0644;

void printCertsUsage(FILE *out)
{
    std::fprintf(out,
                 "Usage: cmq certs <init-ca|server|client> [options]\n\n"
                 "  init-ca [--dir D] [--cn NAME] [--days N]\n"
                 "      Create a root CA: D/ca.crt and D/ca.key.\n"
                 "  server --cn HOST [--san DNS:name,IP:address] [--dir D] [--name server]\n"
                 "      Create the broker's certificate D/server.crt and key D/server.key.\n"
                 "  client --cn NAME [--role sender|receiver|admin] [--dir D] [--name NAME]\n"
                 "      Create a client certificate D/NAME.crt and key D/NAME.key; the CN is the\n"
                 "      identity the broker's [acl] lists refer to.\n\n"
                 "Common options: --days N (CA %d, others %d by default), --rsa (RSA 3072\n"
                 "instead of ECDSA P-256), --ca-dir D (where ca.crt/ca.key are; default --dir),\n"
                 "--force (replace existing files). D defaults to the current directory.\n"
                 "Keys are PKCS#8 PEM files with mode 0600.\n\n"
                 "Exit status: 0 ok, 1 the files could not be made (no CA, files already\n"
                 "there, cannot write), 2 bad arguments.\n",
                 tls::DefaultAuthorityDays, tls::DefaultLeafDays);
}

QString describe(tls::KeyAlgorithm algorithm)
{
    return algorithm == tls::KeyAlgorithm::Rsa3072 ? QStringLiteral("RSA 3072")
                                                   : QStringLiteral("ECDSA P-256");
}

Result<QByteArray> readFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Result<QByteArray>::failure(
            QStringLiteral("cannot read %1: %2").arg(path, file.errorString()));
    return file.readAll();
}

// Client certificates are named after their CN, which therefore has to be a harmless file name.
bool isSafeFileName(const QString &name)
{
    return !name.isEmpty() && !name.startsWith(u'.') && !name.contains(u'/') &&
           !name.contains(u'\\') && !name.contains(u' ');
}

// Writes the key first: a certificate without its key is useless, a key without its
// certificate is merely incomplete and is replaced by the next --force run.
Status writePair(const tls::GeneratedCertificate &generated, const QString &certificatePath,
                 const QString &keyPath, ExistingFile existing)
{
    if (existing == ExistingFile::Refuse) {
        for (const QString &path : {certificatePath, keyPath}) {
            if (QFileInfo::exists(path))
                return failure(
                    QStringLiteral("%1 already exists (use --force to replace it)").arg(path));
        }
    }
    if (Status written =
            writeFileAtomically(keyPath, generated.privateKeyPem, privateKeyMode, existing);
        !written)
        return written;
    return writeFileAtomically(certificatePath, generated.certificatePem, certificateMode,
                               existing);
}

struct Options
{
    tls::CertificateSpec spec;
    QString dir;
    QString caDir;
    QString name;
    QString role;
    ExistingFile existing = ExistingFile::Refuse;
};

// Parses the options of one subcommand; returns an exit code on failure or --help.
std::optional<int> parseOptions(const QString &subcommand, const QStringList &args,
                                Options *options)
{
    QCommandLineParser parser;
    const QCommandLineOption dir(QStringLiteral("dir"), QStringLiteral("Output directory."),
                                 QStringLiteral("D"), QStringLiteral("."));
    const QCommandLineOption caDir(QStringLiteral("ca-dir"),
                                   QStringLiteral("Directory of ca.crt and ca.key."),
                                   QStringLiteral("D"));
    const QCommandLineOption cn(QStringLiteral("cn"), QStringLiteral("Common name."),
                                QStringLiteral("NAME"));
    const QCommandLineOption san(QStringLiteral("san"),
                                 QStringLiteral("Subject alternative names."),
                                 QStringLiteral("LIST"));
    const QCommandLineOption days(QStringLiteral("days"), QStringLiteral("Validity in days."),
                                  QStringLiteral("N"));
    const QCommandLineOption name(QStringLiteral("name"), QStringLiteral("File base name."),
                                  QStringLiteral("NAME"));
    const QCommandLineOption role(QStringLiteral("role"), QStringLiteral("ACL role hint."),
                                  QStringLiteral("ROLE"));
    const QCommandLineOption rsa(QStringLiteral("rsa"), QStringLiteral("RSA 3072 key."));
    const QCommandLineOption force(QStringLiteral("force"), QStringLiteral("Replace files."));
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Help."));
    parser.addOptions({dir, caDir, cn, days, rsa, force, help, san, name, role});

    if (!parser.parse(QStringList{QStringLiteral("cmq certs ") + subcommand} + args)) {
        std::fprintf(stderr, "cmq certs %s: %s\n", qPrintable(subcommand),
                     qPrintable(parser.errorText()));
        return ExitUsage;
    }
    if (parser.isSet(help)) {
        printCertsUsage(stdout);
        return ExitOk;
    }
    // An option meant for another subcommand is refused, not silently ignored.
    const bool isServer = subcommand == QLatin1String("server");
    const bool isClient = subcommand == QLatin1String("client");
    for (const auto &[option, allowed] :
         {std::pair{&san, isServer}, std::pair{&name, isServer || isClient},
          std::pair{&role, isClient}}) {
        if (parser.isSet(*option) && !allowed) {
            std::fprintf(stderr, "cmq certs %s: --%s does not apply here\n", qPrintable(subcommand),
                         qPrintable(option->names().constFirst()));
            return ExitUsage;
        }
    }
    if (!parser.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "cmq certs %s: unexpected argument '%s'\n", qPrintable(subcommand),
                     qPrintable(parser.positionalArguments().constFirst()));
        return ExitUsage;
    }

    tls::CertificateSpec &spec = options->spec;
    spec.role = subcommand == QLatin1String("init-ca")  ? CertificateRole::Authority
                : subcommand == QLatin1String("server") ? CertificateRole::Server
                                                        : CertificateRole::Client;
    spec.keyAlgorithm = parser.isSet(rsa) ? tls::KeyAlgorithm::Rsa3072 : tls::KeyAlgorithm::EcP256;
    spec.validityDays =
        spec.role == CertificateRole::Authority ? tls::DefaultAuthorityDays : tls::DefaultLeafDays;
    if (parser.isSet(days)) {
        bool ok = false;
        spec.validityDays = parser.value(days).toInt(&ok);
        if (!ok || spec.validityDays < 1) {
            std::fprintf(stderr, "cmq certs: --days must be a positive number of days\n");
            return ExitUsage;
        }
    }
    spec.commonName = parser.value(cn);
    if (spec.role == CertificateRole::Authority && spec.commonName.isEmpty())
        spec.commonName = QStringLiteral("CipherMQ CA");
    if (spec.commonName.isEmpty()) {
        std::fprintf(stderr, "cmq certs %s: --cn is required\n", qPrintable(subcommand));
        return ExitUsage;
    }
    if (parser.isSet(san)) {
        auto names = tls::parseSubjectAltNames(parser.value(san));
        if (!names) {
            std::fprintf(stderr, "cmq certs server: --san: %s\n", qPrintable(names.error()));
            return ExitUsage;
        }
        spec.subjectAltNames = names.value();
    }
    options->dir = parser.value(dir);
    options->caDir = parser.isSet(caDir) ? parser.value(caDir) : options->dir;
    options->name = parser.value(name);
    options->role = parser.value(role).toLower();
    if (!options->role.isEmpty() && options->role != QLatin1String("sender") &&
        options->role != QLatin1String("receiver") && options->role != QLatin1String("admin")) {
        std::fprintf(stderr, "cmq certs client: --role must be sender, receiver or admin\n");
        return ExitUsage;
    }
    options->existing = parser.isSet(force) ? ExistingFile::Replace : ExistingFile::Refuse;
    return std::nullopt;
}

void printWarnings(const tls::GeneratedCertificate &generated)
{
    for (const QString &warning : generated.warnings)
        std::fprintf(stderr, "cmq certs: warning: %s\n", qPrintable(warning));
}

void printAclHint(const QString &commonName, const QString &role)
{
    const QByteArray cn = commonName.toUtf8();
    const char *config = "/etc/ciphermq/config.toml";
    if (role == QLatin1String("sender")) {
        std::printf("Next: add \"%s\" to acl.sender_cns in %s.\n", cn.constData(), config);
    } else if (role == QLatin1String("receiver")) {
        std::printf("Next: add \"%s\" to acl.receiver_cns in %s (its queues are named "
                    "\"%s_...\").\n",
                    cn.constData(), config, cn.constData());
    } else if (role == QLatin1String("admin")) {
        std::printf("Next: add \"%s\" to acl.admin_cns and to admin.allowed_cns in %s.\n",
                    cn.constData(), config);
    } else {
        std::printf("Next: add \"%s\" to the [acl] list of its role in %s:\n"
                    "  sender_cns (publishes), receiver_cns (consumes queues \"%s_...\"),\n"
                    "  admin_cns (admin; also admin.allowed_cns for the admin listener).\n",
                    cn.constData(), config, cn.constData());
    }
    std::printf("Then reload the broker: systemctl reload ciphermq-broker\n");
}

int run(const QString &subcommand, const QStringList &args)
{
    Options options;
    if (const std::optional<int> exit = parseOptions(subcommand, args, &options))
        return *exit;
    const tls::CertificateSpec &spec = options.spec;

    if (!QDir().mkpath(options.dir)) {
        std::fprintf(stderr, "cmq certs: cannot create directory %s\n", qPrintable(options.dir));
        return ExitFailure;
    }
    const QDir dir(options.dir);
    const QDir caDir(options.caDir);

    QString baseName = options.name;
    if (baseName.isEmpty()) {
        baseName = spec.role == CertificateRole::Authority ? QStringLiteral("ca")
                   : spec.role == CertificateRole::Server  ? QStringLiteral("server")
                                                           : spec.commonName;
    }
    if (!isSafeFileName(baseName)) {
        std::fprintf(stderr,
                     "cmq certs: \"%s\" cannot be used as a file name; choose one with --name\n",
                     qPrintable(baseName));
        return ExitUsage;
    }
    const QString certificatePath = dir.absoluteFilePath(baseName + QStringLiteral(".crt"));
    const QString keyPath = dir.absoluteFilePath(baseName + QStringLiteral(".key"));

    Result<tls::GeneratedCertificate> generated = [&] {
        if (spec.role == CertificateRole::Authority)
            return tls::createAuthority(spec);
        const auto caCertificate = readFile(caDir.absoluteFilePath(QStringLiteral("ca.crt")));
        if (!caCertificate)
            return Result<tls::GeneratedCertificate>::failure(
                caCertificate.error() + QStringLiteral(" (run 'cmq certs init-ca' first)"));
        const auto caKey = readFile(caDir.absoluteFilePath(QStringLiteral("ca.key")));
        if (!caKey)
            return Result<tls::GeneratedCertificate>::failure(caKey.error());
        return tls::issueCertificate(spec, tls::Authority{caCertificate.value(), caKey.value()});
    }();
    if (!generated) {
        std::fprintf(stderr, "cmq certs %s: %s\n", qPrintable(subcommand),
                     qPrintable(generated.error()));
        return ExitFailure;
    }
    printWarnings(generated.value());
    if (const Status written =
            writePair(generated.value(), certificatePath, keyPath, options.existing);
        !written) {
        std::fprintf(stderr, "cmq certs %s: %s\n", qPrintable(subcommand),
                     qPrintable(written.error()));
        return ExitFailure;
    }

    const QString until = generated->notAfter.date().toString(Qt::ISODate);
    const QByteArray cn = spec.commonName.toUtf8();
    switch (spec.role) {
    case CertificateRole::Authority:
        std::printf("Created CA \"%s\" (%s, valid until %s):\n"
                    "  %s  trust anchor: tls.ca_cert_path of brokers, and every client\n"
                    "  %s  signing key: keep it secret, ideally off the broker host\n",
                    cn.constData(), qPrintable(describe(spec.keyAlgorithm)), qPrintable(until),
                    qPrintable(certificatePath), qPrintable(keyPath));
        break;
    case CertificateRole::Server:
        std::printf("Created server certificate \"%s\" (%s, %s, valid until %s):\n"
                    "  %s  tls.cert_path\n"
                    "  %s  tls.key_path (mode 0600: make it readable by the broker's user,\n"
                    "      e.g. chgrp ciphermq %s && chmod 0640 %s)\n",
                    cn.constData(), qPrintable(generated->subjectAltNames.join(u',')),
                    qPrintable(describe(spec.keyAlgorithm)), qPrintable(until),
                    qPrintable(certificatePath), qPrintable(keyPath), qPrintable(keyPath),
                    qPrintable(keyPath));
        break;
    case CertificateRole::Client:
        std::printf("Created client certificate \"%s\" (%s, valid until %s):\n  %s\n  %s\n",
                    cn.constData(), qPrintable(describe(spec.keyAlgorithm)), qPrintable(until),
                    qPrintable(certificatePath), qPrintable(keyPath));
        printAclHint(spec.commonName, options.role);
        break;
    }
    return ExitOk;
}

int runCerts(const QStringList &args)
{
    if (args.isEmpty()) {
        printCertsUsage(stderr);
        return ExitUsage;
    }
    const QString &subcommand = args.constFirst();
    if (subcommand == QLatin1String("--help") || subcommand == QLatin1String("-h") ||
        subcommand == QLatin1String("help")) {
        printCertsUsage(stdout);
        return ExitOk;
    }
    if (subcommand != QLatin1String("init-ca") && subcommand != QLatin1String("server") &&
        subcommand != QLatin1String("client")) {
        std::fprintf(stderr, "cmq certs: unknown subcommand '%s'\n\n", qPrintable(subcommand));
        printCertsUsage(stderr);
        return ExitUsage;
    }
    return run(subcommand, args.mid(1));
}

const CommandRegistration registration({QStringLiteral("certs"),
                                        QStringLiteral("create a CA, server and client "
                                                       "certificates (PEM, ECDSA P-256)"),
                                        runCerts});

} // namespace
} // namespace cmq::cli
