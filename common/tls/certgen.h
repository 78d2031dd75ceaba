#pragma once
// Making the certificates a CipherMQ deployment needs — a private root CA, broker (server) and
// client certificates signed by it — with OpenSSL's C API, so `cmq certs` works without the
// openssl command and produces the same profile every time. In memory only; writing the files
// is the caller's business (util/atomicfile.h).

#include <QByteArray>
#include <QDateTime>
#include <QString>
#include <QStringList>

#include "util/result.h"

namespace cmq::tls {

enum class KeyAlgorithm {
    EcP256,  // the default: small, fast, accepted everywhere TLS 1.2+ is
    Rsa3072, // for peers that cannot do ECDSA; 3072 bits matches P-256's strength
};

// Decides basicConstraints, keyUsage and extKeyUsage.
enum class CertificateRole { Authority, Server, Client };

// Ten years for the root, which is painful to replace; 825 days for leaves, the longest
// lifetime that Apple's TLS clients accept and the usual upper bound for private PKIs.
inline constexpr int DefaultAuthorityDays = 3650;
inline constexpr int DefaultLeafDays = 825;

struct CertificateSpec
{
    CertificateRole role = CertificateRole::Client;
    QString commonName; // 1 to 64 characters; for clients this is the ACL identity
    // "DNS:<name>" / "IP:<address>" entries (parseSubjectAltNames). Servers only; when empty a
    // server gets one entry made from its common name.
    QStringList subjectAltNames;
    int validityDays = DefaultLeafDays;
    KeyAlgorithm keyAlgorithm = KeyAlgorithm::EcP256;
};

struct GeneratedCertificate
{
    QByteArray certificatePem;
    QByteArray privateKeyPem;    // PKCS#8 ("BEGIN PRIVATE KEY"), unencrypted
    QDateTime notAfter;          // UTC
    QByteArray serialHex;        // as "openssl x509 -serial" shows it, for logs and revocation
    QStringList subjectAltNames; // as written (servers: the defaulted one when none was given)
    QStringList warnings;        // e.g. the validity was shortened to the CA's
};

// The signing side: a CA certificate and its key as PEM (the files init-ca wrote).
struct Authority
{
    QByteArray certificatePem;
    QByteArray privateKeyPem;
};

// Splits and checks a comma-separated "DNS:broker.example.com,IP:10.0.0.5" list. Returns the
// entries normalised ("IP:::1", "DNS:name" in lower case) or an error naming the bad entry.
Result<QStringList> parseSubjectAltNames(const QString &list);

// A self-signed root (role must be Authority).
Result<GeneratedCertificate> createAuthority(const CertificateSpec &spec);

// A server or client certificate signed by `authority`. Fails when the CA's key does not match
// its certificate, the certificate is not a CA, or it has expired. A leaf never outlives its
// CA: a longer validity is cut to the CA's end, with a warning.
Result<GeneratedCertificate> issueCertificate(const CertificateSpec &spec,
                                              const Authority &authority);

} // namespace cmq::tls
