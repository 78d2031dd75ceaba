#include "tls/certgen.h"

#include <ctime>
#include <memory>

#include <QHostAddress>
#include <QRegularExpression>

#include "tls/openssl.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace cmq::tls {
namespace {

using BignumPtr = OpenSslPtr<BIGNUM, BN_free>;
using NamesPtr = OpenSslPtr<GENERAL_NAMES, GENERAL_NAMES_free>;

// Shortest backdating that absorbs ordinary clock skew between the machine that issues a
// certificate and the peers that check it minutes later.
constexpr long notBeforeSkewSeconds = 5 * 60;
// X.520 upper bound for a common name (ub-common-name).
constexpr qsizetype maxCommonNameLength = 64;

template <typename T> Result<T> openSslFailure(const QString &what)
{
    return Result<T>::failure(QStringLiteral("%1: %2").arg(what, takeOpenSslError()));
}

// Without a callback OpenSSL would prompt on the terminal for an encrypted CA key.
int refusePassword(char *, int, int, void *)
{
    return -1;
}

QDateTime toDateTime(const ASN1_TIME *time)
{
    std::tm tm = {};
    if (ASN1_TIME_to_tm(time, &tm) != 1)
        return {};
    return QDateTime(QDate(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday),
                     QTime(tm.tm_hour, tm.tm_min, tm.tm_sec), Qt::UTC);
}

Status checkCommonName(const QString &commonName)
{
    if (commonName.isEmpty())
        return failure(QStringLiteral("the common name must not be empty"));
    if (commonName.size() > maxCommonNameLength)
        return failure(QStringLiteral("the common name \"%1\" is longer than %2 characters")
                           .arg(commonName)
                           .arg(maxCommonNameLength));
    for (const QChar c : commonName) {
        if (c.category() == QChar::Other_Control || c.category() == QChar::Other_Format)
            return failure(QStringLiteral("the common name must not contain control characters"));
    }
    if (commonName.trimmed() != commonName)
        return failure(QStringLiteral("the common name \"%1\" starts or ends with a space "
                                      "(the broker compares names exactly)")
                           .arg(commonName));
    return success();
}

Result<PkeyPtr> generateKey(KeyAlgorithm algorithm)
{
    PkeyPtr key(algorithm == KeyAlgorithm::EcP256
                    ? EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")
                    : EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t(3072)));
    if (!key)
        return openSslFailure<PkeyPtr>(QStringLiteral("key generation failed"));
    return key;
}

// 128 random bits: unpredictable serials are what keeps a chosen-prefix collision from being
// turned into a forged certificate, and two runs can never repeat one.
bool setRandomSerial(X509 *certificate)
{
    BignumPtr serial(BN_new());
    if (!serial)
        return false;
    do {
        if (!BN_rand(serial.get(), 128, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY))
            return false;
    } while (BN_is_zero(serial.get()));
    return BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(certificate)) != nullptr;
}

QByteArray serialHex(X509 *certificate)
{
    BignumPtr serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(certificate), nullptr));
    if (!serial)
        return {};
    char *hex = BN_bn2hex(serial.get());
    QByteArray text(hex);
    OPENSSL_free(hex);
    return text;
}

bool addExtension(X509 *certificate, X509V3_CTX *context, int nid, const char *value)
{
    X509_EXTENSION *extension = X509V3_EXT_conf_nid(nullptr, context, nid, value);
    if (!extension)
        return false;
    const bool added = X509_add_ext(certificate, extension, -1) == 1;
    X509_EXTENSION_free(extension);
    return added;
}

bool addSubjectAltNames(X509 *certificate, const QStringList &entries)
{
    NamesPtr names(sk_GENERAL_NAME_new_null());
    if (!names)
        return false;
    for (const QString &entry : entries) {
        const QByteArray value = entry.section(u':', 1).toUtf8();
        GENERAL_NAME *name = nullptr;
        if (entry.startsWith(QLatin1String("IP:"))) {
            ASN1_OCTET_STRING *address = a2i_IPADDRESS(value.constData());
            if (!address)
                return false;
            name = GENERAL_NAME_new();
            if (!name) {
                ASN1_OCTET_STRING_free(address);
                return false;
            }
            GENERAL_NAME_set0_value(name, GEN_IPADD, address);
        } else {
            ASN1_IA5STRING *dns = ASN1_IA5STRING_new();
            if (!dns || !ASN1_STRING_set(dns, value.constData(), int(value.size()))) {
                ASN1_IA5STRING_free(dns);
                return false;
            }
            name = GENERAL_NAME_new();
            if (!name) {
                ASN1_IA5STRING_free(dns);
                return false;
            }
            GENERAL_NAME_set0_value(name, GEN_DNS, dns);
        }
        if (!sk_GENERAL_NAME_push(names.get(), name)) {
            GENERAL_NAME_free(name);
            return false;
        }
    }
    return X509_add1_ext_i2d(certificate, NID_subject_alt_name, names.get(), 0,
                             X509V3_ADD_DEFAULT) == 1;
}

// What each role may do. Leaves are never CAs (critical CA:FALSE) and carry only the one
// extended usage they need, so a leaked client key cannot impersonate a broker and vice versa.
// RSA servers keep keyEncipherment for TLS 1.2 peers that still choose RSA key exchange.
bool addRoleExtensions(X509 *certificate, X509V3_CTX *context, const CertificateSpec &spec)
{
    switch (spec.role) {
    case CertificateRole::Authority:
        // pathlen:0: this root signs leaves directly; an intermediate would need a new root.
        return addExtension(certificate, context, NID_basic_constraints,
                            "critical,CA:TRUE,pathlen:0") &&
               addExtension(certificate, context, NID_key_usage, "critical,keyCertSign,cRLSign");
    case CertificateRole::Server:
        return addExtension(certificate, context, NID_basic_constraints, "critical,CA:FALSE") &&
               addExtension(certificate, context, NID_key_usage,
                            spec.keyAlgorithm == KeyAlgorithm::Rsa3072
                                ? "critical,digitalSignature,keyEncipherment"
                                : "critical,digitalSignature") &&
               addExtension(certificate, context, NID_ext_key_usage, "serverAuth");
    case CertificateRole::Client:
        return addExtension(certificate, context, NID_basic_constraints, "critical,CA:FALSE") &&
               addExtension(certificate, context, NID_key_usage, "critical,digitalSignature") &&
               addExtension(certificate, context, NID_ext_key_usage, "clientAuth");
    }
    return false;
}

// A server named by its CN only gets that name as its one SAN (TLS clients match host names
// against the SAN, not the CN), provided the CN is a host name or an address.
Result<QStringList> defaultSubjectAltNames(const QString &commonName)
{
    const bool isAddress = !QHostAddress(commonName).isNull();
    auto names = parseSubjectAltNames((isAddress ? QStringLiteral("IP:") : QStringLiteral("DNS:")) +
                                      commonName);
    if (!names)
        return Result<QStringList>::failure(
            QStringLiteral("the common name \"%1\" is not a host name or address: give the "
                           "names clients connect to as subject alternative names")
                .arg(commonName));
    return names;
}

struct LoadedAuthority
{
    X509Ptr certificate;
    PkeyPtr key;
};

Result<LoadedAuthority> loadAuthority(const Authority &authority)
{
    LoadedAuthority loaded;
    const BioPtr certificateBio = memoryBio(authority.certificatePem);
    loaded.certificate.reset(PEM_read_bio_X509(certificateBio.get(), nullptr, nullptr, nullptr));
    if (!loaded.certificate)
        return openSslFailure<LoadedAuthority>(QStringLiteral("the CA certificate is not PEM"));
    const BioPtr keyBio = memoryBio(authority.privateKeyPem);
    loaded.key.reset(PEM_read_bio_PrivateKey(keyBio.get(), nullptr, refusePassword, nullptr));
    if (!loaded.key)
        return openSslFailure<LoadedAuthority>(
            QStringLiteral("the CA key is not an unencrypted PEM private key"));
    if (X509_check_private_key(loaded.certificate.get(), loaded.key.get()) != 1)
        return openSslFailure<LoadedAuthority>(
            QStringLiteral("the CA key does not belong to the CA certificate"));
    if (X509_check_ca(loaded.certificate.get()) == 0)
        return Result<LoadedAuthority>::failure(
            QStringLiteral("the CA certificate is not a certificate authority"));
    if (X509_cmp_current_time(X509_get0_notAfter(loaded.certificate.get())) <= 0)
        return Result<LoadedAuthority>::failure(
            QStringLiteral("the CA certificate expired on %1")
                .arg(toDateTime(X509_get0_notAfter(loaded.certificate.get()))
                         .toString(Qt::ISODate)));
    return loaded;
}

// Builds, signs and encodes one certificate. `issuer` and `issuerKey` are null for a root.
Result<GeneratedCertificate> build(const CertificateSpec &specIn, X509 *issuer, EVP_PKEY *issuerKey)
{
    CertificateSpec spec = specIn;
    if (const Status valid = checkCommonName(spec.commonName); !valid)
        return Result<GeneratedCertificate>::failure(valid.error());
    if (spec.validityDays < 1)
        return Result<GeneratedCertificate>::failure(
            QStringLiteral("the validity must be at least one day"));
    if (spec.role != CertificateRole::Server && !spec.subjectAltNames.isEmpty())
        return Result<GeneratedCertificate>::failure(
            QStringLiteral("only server certificates carry subject alternative names"));
    if (spec.role == CertificateRole::Server && spec.subjectAltNames.isEmpty()) {
        auto names = defaultSubjectAltNames(spec.commonName);
        if (!names)
            return Result<GeneratedCertificate>::failure(names.error());
        spec.subjectAltNames = names.value();
    }

    ERR_clear_error();
    auto key = generateKey(spec.keyAlgorithm);
    if (!key)
        return Result<GeneratedCertificate>::failure(key.error());

    X509Ptr certificate(X509_new());
    if (!certificate || !X509_set_version(certificate.get(), X509_VERSION_3) ||
        !setRandomSerial(certificate.get()))
        return openSslFailure<GeneratedCertificate>(QStringLiteral("cannot create a certificate"));

    X509_NAME *subject = X509_get_subject_name(certificate.get());
    const QByteArray commonName = spec.commonName.toUtf8();
    if (!X509_NAME_add_entry_by_NID(subject, NID_commonName, MBSTRING_UTF8,
                                    reinterpret_cast<const unsigned char *>(commonName.constData()),
                                    int(commonName.size()), -1, 0))
        return openSslFailure<GeneratedCertificate>(QStringLiteral("cannot set the subject"));
    X509 *const signer = issuer ? issuer : certificate.get();
    EVP_PKEY *const signingKey = issuerKey ? issuerKey : key->get();
    if (!X509_set_issuer_name(certificate.get(), X509_get_subject_name(signer)) ||
        !X509_set_pubkey(certificate.get(), key->get()))
        return openSslFailure<GeneratedCertificate>(QStringLiteral("cannot set the issuer"));

    if (!X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -notBeforeSkewSeconds) ||
        !X509_time_adj_ex(X509_getm_notAfter(certificate.get()), spec.validityDays, 0, nullptr))
        return openSslFailure<GeneratedCertificate>(QStringLiteral("cannot set the validity"));
    QStringList warnings;
    if (issuer &&
        ASN1_TIME_compare(X509_get0_notAfter(certificate.get()), X509_get0_notAfter(issuer)) > 0) {
        // Peers reject the chain once the CA has expired anyway; say so now rather than then.
        if (!X509_set1_notAfter(certificate.get(), X509_get0_notAfter(issuer)))
            return openSslFailure<GeneratedCertificate>(QStringLiteral("cannot set the validity"));
        warnings.append(QStringLiteral("the validity was shortened to the CA's, which ends on %1")
                            .arg(toDateTime(X509_get0_notAfter(issuer)).toString(Qt::ISODate)));
    }

    X509V3_CTX context;
    X509V3_set_ctx(&context, signer, certificate.get(), nullptr, nullptr, 0);
    X509V3_set_ctx_nodb(&context);
    if (!issuer && !X509V3_set_issuer_pkey(&context, signingKey))
        return openSslFailure<GeneratedCertificate>(QStringLiteral("cannot set the issuer key"));
    // The subject key identifier before the authority key identifier: for a root, the latter
    // is copied from the former.
    if (!addRoleExtensions(certificate.get(), &context, spec) ||
        !addExtension(certificate.get(), &context, NID_subject_key_identifier, "hash") ||
        !addExtension(certificate.get(), &context, NID_authority_key_identifier, "keyid:always") ||
        (!spec.subjectAltNames.isEmpty() &&
         !addSubjectAltNames(certificate.get(), spec.subjectAltNames)))
        return openSslFailure<GeneratedCertificate>(
            QStringLiteral("cannot add the certificate extensions"));

    if (X509_sign(certificate.get(), signingKey, EVP_sha256()) <= 0)
        return openSslFailure<GeneratedCertificate>(QStringLiteral("signing failed"));

    const BioPtr certificateBio = writableMemoryBio();
    const BioPtr keyBio = writableMemoryBio();
    if (!certificateBio || !keyBio ||
        !PEM_write_bio_X509(certificateBio.get(), certificate.get()) ||
        !PEM_write_bio_PKCS8PrivateKey(keyBio.get(), key->get(), nullptr, nullptr, 0, nullptr,
                                       nullptr))
        return openSslFailure<GeneratedCertificate>(QStringLiteral("cannot encode PEM"));

    GeneratedCertificate generated;
    generated.certificatePem = takeBioContents(certificateBio.get());
    generated.privateKeyPem = takeBioContents(keyBio.get());
    generated.notAfter = toDateTime(X509_get0_notAfter(certificate.get()));
    generated.serialHex = serialHex(certificate.get());
    generated.subjectAltNames = spec.subjectAltNames;
    generated.warnings = warnings;
    return generated;
}

} // namespace

Result<QStringList> parseSubjectAltNames(const QString &list)
{
    // RFC 1123 labels; a leading "*." for a wildcard; underscores are tolerated because
    // internal names sometimes have them and Qt's hostname check accepts them.
    static const QRegularExpression dnsName(QStringLiteral(
        R"(^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$)"));
    QStringList entries;
    for (const QString &raw : list.split(u',', Qt::SkipEmptyParts)) {
        const QString item = raw.trimmed();
        const QString type = item.section(u':', 0, 0).toUpper();
        const QString value = item.section(u':', 1).trimmed();
        if (type == QLatin1String("DNS")) {
            const QString name = value.toLower();
            if (name.size() > 253 || !dnsName.match(name).hasMatch())
                return Result<QStringList>::failure(
                    QStringLiteral("\"%1\" is not a valid DNS name").arg(value));
            entries.append(QStringLiteral("DNS:") + name);
        } else if (type == QLatin1String("IP")) {
            const QHostAddress address(value);
            if (address.isNull() || value.contains(u'/'))
                return Result<QStringList>::failure(
                    QStringLiteral("\"%1\" is not an IPv4 or IPv6 address").arg(value));
            entries.append(QStringLiteral("IP:") + address.toString());
        } else {
            return Result<QStringList>::failure(
                QStringLiteral("\"%1\": each entry must be DNS:<name> or IP:<address>").arg(item));
        }
    }
    if (entries.isEmpty())
        return Result<QStringList>::failure(QStringLiteral("no subject alternative name given"));
    entries.removeDuplicates();
    return entries;
}

Result<GeneratedCertificate> createAuthority(const CertificateSpec &spec)
{
    if (spec.role != CertificateRole::Authority)
        return Result<GeneratedCertificate>::failure(
            QStringLiteral("createAuthority needs the Authority role"));
    return build(spec, nullptr, nullptr);
}

Result<GeneratedCertificate> issueCertificate(const CertificateSpec &spec,
                                              const Authority &authority)
{
    if (spec.role == CertificateRole::Authority)
        return Result<GeneratedCertificate>::failure(
            QStringLiteral("a CA is created with createAuthority, not issued"));
    ERR_clear_error();
    auto loaded = loadAuthority(authority);
    if (!loaded)
        return Result<GeneratedCertificate>::failure(loaded.error());
    return build(spec, loaded->certificate.get(), loaded->key.get());
}

} // namespace cmq::tls
