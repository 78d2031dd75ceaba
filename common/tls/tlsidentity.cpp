#include "tlsidentity.h"

#include <memory>
#include <vector>

#include <QDateTime>
#include <QFile>
#include <QLoggingCategory>
#include <QSslSocket>

#include "tls/openssl.h"
#include "tls/tlslog.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

namespace cmq::tls {
namespace {

// Every file read here is a small PEM; the cap keeps a wrong path (a log, a device) from being
// read whole.
constexpr qint64 maxPemFileSize = 1024 * 1024;

using CrlPtr = OpenSslPtr<X509_CRL, X509_CRL_free>;

Result<QByteArray> readSmallFile(const QString &path, const QString &what)
{
    if (path.isEmpty())
        return Result<QByteArray>::failure(QStringLiteral("no %1 file configured").arg(what));
    QFile file(path);
    if (!file.exists())
        return Result<QByteArray>::failure(
            QStringLiteral("%1 file %2 does not exist").arg(what, path));
    if (!file.open(QIODevice::ReadOnly))
        return Result<QByteArray>::failure(
            QStringLiteral("cannot read %1 file %2: %3").arg(what, path, file.errorString()));
    if (file.size() > maxPemFileSize)
        return Result<QByteArray>::failure(
            QStringLiteral("%1 file %2 is too large to be PEM").arg(what, path));
    return file.readAll();
}

// A password callback that refuses: without one OpenSSL would prompt on the terminal.
int refusePassword(char *, int, int, void *askedForPassword)
{
    *static_cast<bool *>(askedForPassword) = true;
    return -1;
}

struct ParsedKey
{
    PkeyPtr key;
    bool encrypted = false;
};

ParsedKey parsePrivateKey(const QByteArray &pem)
{
    ParsedKey parsed;
    const BioPtr bio = memoryBio(pem);
    parsed.key.reset(
        PEM_read_bio_PrivateKey(bio.get(), nullptr, refusePassword, &parsed.encrypted));
    return parsed;
}

QByteArray toPkcs8Pem(EVP_PKEY *key)
{
    const BioPtr bio = writableMemoryBio();
    if (!PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr))
        return {};
    return takeBioContents(bio.get());
}

X509Ptr toX509(const QSslCertificate &certificate)
{
    const QByteArray der = certificate.toDer();
    auto *p = reinterpret_cast<const unsigned char *>(der.constData());
    return X509Ptr(d2i_X509(nullptr, &p, long(der.size())));
}

bool keyMatchesCertificate(const QSslKey &key, const QSslCertificate &certificate)
{
    QByteArray pem = key.toPem();
    const ParsedKey parsed = parsePrivateKey(pem);
    pem.fill('\0');
    const X509Ptr x509 = toX509(certificate);
    const bool matches = parsed.key && x509 && X509_check_private_key(x509.get(), parsed.key.get());
    ERR_clear_error();
    return matches;
}

// Same text as QSslCertificate::serialNumber() with the OpenSSL backend: the integer's
// big-endian magnitude bytes as lowercase hex pairs joined by ':'.
QByteArray serialText(const ASN1_INTEGER *serial)
{
    const auto *bytes = ASN1_STRING_get0_data(serial);
    const int length = ASN1_STRING_length(serial);
    QByteArrayList pairs;
    pairs.reserve(length);
    for (int i = 0; i < length; ++i)
        pairs.append(QByteArray::number(bytes[i], 16).rightJustified(2, '0'));
    return pairs.join(':');
}

struct Identity
{
    QList<QSslCertificate> chain;
    QSslKey key;
    QList<QSslCertificate> caCertificates;
};

Result<Identity> loadIdentity(const TlsFiles &files)
{
    auto chain = loadCertificates(files.certPath);
    if (!chain)
        return Result<Identity>::failure(chain.error());
    auto key = loadPrivateKey(files.keyPath);
    if (!key)
        return Result<Identity>::failure(key.error());
    auto caCertificates = loadCertificates(files.caPath);
    if (!caCertificates)
        return Result<Identity>::failure(caCertificates.error());

    // Caught here rather than in the first handshake, where it would only show as every
    // connection failing with a backend error that does not name the files.
    if (!keyMatchesCertificate(key.value(), chain->constFirst()))
        return Result<Identity>::failure(
            QStringLiteral("private key %1 does not belong to certificate %2")
                .arg(files.keyPath, files.certPath));

    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QSslCertificate &leaf = chain->constFirst();
    if (leaf.expiryDate() < now || leaf.effectiveDate() > now)
        qCWarning(lcTls) << "certificate" << files.certPath << "is only valid from"
                         << leaf.effectiveDate() << "to" << leaf.expiryDate()
                         << ": peers will reject it";

    return Identity{std::move(chain).value(), std::move(key).value(),
                    std::move(caCertificates).value()};
}

QSslConfiguration configurationFor(const Identity &identity)
{
    QSslConfiguration configuration = QSslConfiguration::defaultConfiguration();
    configuration.setLocalCertificateChain(identity.chain);
    configuration.setPrivateKey(identity.key);
    // Replaces the system roots, and also stops Qt from loading them on demand: only our CA
    // may vouch for a peer.
    configuration.setCaCertificates(identity.caCertificates);
    configuration.setPeerVerifyMode(QSslSocket::VerifyPeer);
    configuration.setProtocol(QSsl::TlsV1_2OrLater);
    // TLS 1.2: forward secrecy (ephemeral ECDH) and AEAD (AES-GCM, ChaCha20-Poly1305) only,
    // Mozilla's "intermediate" profile; no RSA key exchange, no CBC, no finite-field DHE.
    // TLS 1.3 suites are all of that kind already and stay OpenSSL's ("Ciphersuites").
    configuration.setBackendConfigurationOption(QByteArrayLiteral("CipherString"),
                                                QByteArrayLiteral(kTls12Ciphers));
    return configuration;
}

} // namespace

Result<QSslKey> loadPrivateKey(const QString &path)
{
    auto data = readSmallFile(path, QStringLiteral("private key"));
    if (!data)
        return Result<QSslKey>::failure(data.error());

    ERR_clear_error();
    // OpenSSL reads all three unencrypted forms (and skips an "EC PARAMETERS" block before the
    // key); asking it first also tells us the algorithm, which QSslKey needs up front.
    ParsedKey parsed = parsePrivateKey(data.value());
    const bool looksLikeCertificate = data->contains("-----BEGIN CERTIFICATE-----");
    data->fill('\0');
    if (parsed.encrypted) {
        ERR_clear_error();
        return Result<QSslKey>::failure(
            QStringLiteral("private key %1 is encrypted; encrypted keys are not supported "
                           "(decrypt it with: openssl pkey -in KEY -out PLAIN_KEY)")
                .arg(path));
    }
    if (!parsed.key) {
        const QString detail = takeOpenSslError();
        if (looksLikeCertificate)
            return Result<QSslKey>::failure(
                QStringLiteral("%1 holds a certificate, not a private key").arg(path));
        return Result<QSslKey>::failure(
            QStringLiteral("%1 holds no PEM private key (expected BEGIN PRIVATE KEY, "
                           "BEGIN RSA PRIVATE KEY or BEGIN EC PRIVATE KEY): %2")
                .arg(path, detail));
    }

    QSsl::KeyAlgorithm algorithm;
    switch (EVP_PKEY_get_base_id(parsed.key.get())) {
    case EVP_PKEY_RSA:
        algorithm = QSsl::Rsa;
        break;
    case EVP_PKEY_EC:
        algorithm = QSsl::Ec;
        break;
    default:
        return Result<QSslKey>::failure(
            QStringLiteral("private key %1 is of type %2; only RSA and EC keys are supported")
                .arg(path, QString::fromLatin1(EVP_PKEY_get0_type_name(parsed.key.get()))));
    }

    // Qt always gets unencrypted PKCS#8, whatever the file held: one input form for the TLS
    // backend to get right.
    QByteArray pkcs8 = toPkcs8Pem(parsed.key.get());
    const QSslKey key(pkcs8, algorithm, QSsl::Pem, QSsl::PrivateKey);
    pkcs8.fill('\0');
    ERR_clear_error();
    if (key.isNull())
        return Result<QSslKey>::failure(
            QStringLiteral("the TLS backend (%1) could not load private key %2")
                .arg(QSslSocket::activeBackend(), path));
    return key;
}

Result<QList<QSslCertificate>> loadCertificates(const QString &path)
{
    const auto data = readSmallFile(path, QStringLiteral("certificate"));
    if (!data)
        return Result<QList<QSslCertificate>>::failure(data.error());
    const QList<QSslCertificate> certificates = QSslCertificate::fromData(data.value(), QSsl::Pem);
    if (certificates.isEmpty())
        return Result<QList<QSslCertificate>>::failure(
            QStringLiteral("%1 holds no PEM certificate").arg(path));
    for (const QSslCertificate &certificate : certificates) {
        if (certificate.isNull())
            return Result<QList<QSslCertificate>>::failure(
                QStringLiteral("%1 holds a certificate that cannot be parsed").arg(path));
    }
    return certificates;
}

Result<QSslConfiguration> serverConfiguration(const TlsFiles &files)
{
    const auto identity = loadIdentity(files);
    if (!identity)
        return Result<QSslConfiguration>::failure(identity.error());
    QSslConfiguration configuration = configurationFor(identity.value());
    // Without this OpenSSL completes the handshake with a client that sent no certificate and
    // leaves the refusal to Qt afterwards; with it the handshake itself fails with an alert.
    configuration.setMissingCertificateIsFatal(true);
    return configuration;
}

Result<QSslConfiguration> clientConfiguration(const TlsFiles &files)
{
    const auto identity = loadIdentity(files);
    if (!identity)
        return Result<QSslConfiguration>::failure(identity.error());
    return configurationFor(identity.value());
}

QString commonName(const QSslCertificate &certificate)
{
    const QStringList names = certificate.subjectInfo(QSslCertificate::CommonName);
    return names.size() == 1 ? names.constFirst() : QString();
}

bool hasSeveralCommonNames(const QSslCertificate &certificate)
{
    return certificate.subjectInfo(QSslCertificate::CommonName).size() > 1;
}

Result<QList<QByteArray>> loadRevokedSerials(const QString &crlPath,
                                             const QList<QSslCertificate> &issuers)
{
    using SerialsResult = Result<QList<QByteArray>>;
    const auto data = readSmallFile(crlPath, QStringLiteral("CRL"));
    if (!data)
        return SerialsResult::failure(data.error());

    std::vector<X509Ptr> issuerCerts;
    for (const QSslCertificate &issuer : issuers) {
        if (X509Ptr x509 = toX509(issuer))
            issuerCerts.push_back(std::move(x509));
    }

    ERR_clear_error();
    const BioPtr bio = memoryBio(data.value());
    QList<QByteArray> serials;
    int crlCount = 0;
    bool askedForPassword = false;
    while (
        CrlPtr crl{PEM_read_bio_X509_CRL(bio.get(), nullptr, refusePassword, &askedForPassword)}) {
        ++crlCount;
        bool verified = false;
        for (const X509Ptr &issuer : issuerCerts) {
            if (X509_NAME_cmp(X509_CRL_get_issuer(crl.get()),
                              X509_get_subject_name(issuer.get())) == 0 &&
                X509_CRL_verify(crl.get(), X509_get0_pubkey(issuer.get())) == 1) {
                verified = true;
                break;
            }
        }
        ERR_clear_error();
        if (!verified)
            return SerialsResult::failure(
                QStringLiteral("CRL %1 is not signed by the configured CA").arg(crlPath));

        const ASN1_TIME *nextUpdate = X509_CRL_get0_nextUpdate(crl.get());
        if (nextUpdate && X509_cmp_current_time(nextUpdate) < 0)
            qCWarning(lcTls) << "CRL" << crlPath << "is past its nextUpdate; using it anyway";

        const STACK_OF(X509_REVOKED) *revoked = X509_CRL_get_REVOKED(crl.get());
        for (int i = 0; i < sk_X509_REVOKED_num(revoked); ++i)
            serials.append(
                serialText(X509_REVOKED_get0_serialNumber(sk_X509_REVOKED_value(revoked, i))));
    }
    // The loop ends on the read error "no start line" at the end of the data.
    ERR_clear_error();
    if (crlCount == 0)
        return SerialsResult::failure(QStringLiteral("%1 holds no PEM CRL").arg(crlPath));
    return serials;
}

bool isRevoked(const QSslCertificate &certificate, const QList<QByteArray> &revokedSerials)
{
    return !certificate.isNull() && revokedSerials.contains(certificate.serialNumber());
}

std::optional<IdentityRefusal> identityRefusal(const QSslCertificate &certificate,
                                               const QList<QByteArray> &revokedSerials)
{
    if (hasSeveralCommonNames(certificate))
        return IdentityRefusal{
            QStringLiteral("several_common_names"),
            QStringLiteral("Unauthorized: the client certificate has more than one Common Name")};
    if (commonName(certificate).isEmpty())
        return IdentityRefusal{QStringLiteral("no_common_name"),
                               QStringLiteral("Unauthorized: the client certificate has no "
                                              "Common Name")};
    if (isRevoked(certificate, revokedSerials))
        return IdentityRefusal{QStringLiteral("revoked"),
                               QStringLiteral("Unauthorized: the client certificate has been "
                                              "revoked")};
    return std::nullopt;
}

} // namespace cmq::tls
