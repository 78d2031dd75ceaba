#pragma once
// Loading PEM identities and building the TLS configurations both ends use.
// Keys may be PKCS#8 ("BEGIN PRIVATE KEY"), PKCS#1 ("BEGIN RSA PRIVATE KEY") or SEC1
// ("BEGIN EC PRIVATE KEY"), RSA or EC: the original broker accepted PKCS#8 only.
//
// Revocation: Qt 6.4's QSslConfiguration has no CRL API, and the OpenSSL backend builds its
// X509_STORE privately, so a CRL cannot take part in the handshake's own verification. A CRL
// is checked by hand instead: loadRevokedSerials() once at start-up (signature verified against
// the CA with OpenSSL), then isRevoked() on the peer certificate right after the handshake,
// before the connection is used.

#include <optional>

#include <QList>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QString>

#include "util/result.h"

namespace cmq::tls {

// OpenSSL cipher string for TLS 1.2: ECDHE-ECDSA and ECDHE-RSA suites, whichever the
// certificate allows. Also what ciphermq-bench's own OpenSSL connections offer.
inline constexpr char kTls12Ciphers[] = "ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL:!PSK";

struct TlsFiles
{
    QString certPath; // PEM, leaf first, optional chain after it
    QString keyPath;  // PEM private key, unencrypted
    QString caPath;   // PEM, one or more CA certificates trusted for the peer
};

Result<QSslKey> loadPrivateKey(const QString &path);
Result<QList<QSslCertificate>> loadCertificates(const QString &path);

// TLS 1.2 or newer (1.2 with ECDHE + AES-GCM/ChaCha20-Poly1305 suites only), our certificate
// and key, the CA as the only trust anchor.
// Server: the peer must present a certificate that verifies (QSslSocket::VerifyPeer).
// Client: the server's certificate is verified against the CA as well.
// Fails when a file is missing, unreadable, not PEM, or the key does not match the certificate.
Result<QSslConfiguration> serverConfiguration(const TlsFiles &files);
Result<QSslConfiguration> clientConfiguration(const TlsFiles &files);

// The subject's Common Name (OID 2.5.4.3); empty when the certificate has none, or more than
// one: tools disagree on which of several CNs counts (some take the first, some the last), so
// such a subject names no one.
QString commonName(const QSslCertificate &certificate);
// Whether the subject holds more than one CN (commonName() is empty then), for the refusal text.
bool hasSeveralCommonNames(const QSslCertificate &certificate);

// The serial numbers listed in the PEM CRL(s) at crlPath, in QSslCertificate::serialNumber()
// form ("0a:1b:..."). Each CRL must be signed by one of issuers (normally the configured CA);
// fails when the file is missing, holds no CRL, or a signature does not verify. A CRL past
// its nextUpdate is still used, with a warning: revoking from an old list beats none.
Result<QList<QByteArray>> loadRevokedSerials(const QString &crlPath,
                                             const QList<QSslCertificate> &issuers);

// Whether certificate's serial is in revokedSerials. Serials are unique per issuer only, so
// this is exact as long as the CRL and the trusted CA are the same one.
bool isRevoked(const QSslCertificate &certificate, const QList<QByteArray> &revokedSerials);

// Why a peer certificate that verified against the CA still stands for no identity: it has no
// CN, several CNs, or it is revoked. `reason` is the metric label, `text` the line after
// "Error: " the peer gets before the close.
struct IdentityRefusal
{
    QString reason;
    QString text;
};
std::optional<IdentityRefusal> identityRefusal(const QSslCertificate &certificate,
                                               const QList<QByteArray> &revokedSerials);

} // namespace cmq::tls
