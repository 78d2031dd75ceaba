#pragma once
// Loading PEM identities and building the TLS configurations both ends use.
// Keys may be PKCS#8 ("BEGIN PRIVATE KEY"), PKCS#1 ("BEGIN RSA PRIVATE KEY") or SEC1
// ("BEGIN EC PRIVATE KEY"), RSA or EC: the original broker accepted PKCS#8 only.

#include <QList>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QString>

#include "util/result.h"

namespace cmq::tls {

struct TlsFiles
{
    QString certPath; // PEM, leaf first, optional chain after it
    QString keyPath;  // PEM private key, unencrypted
    QString caPath;   // PEM, one or more CA certificates trusted for the peer
};

Result<QSslKey> loadPrivateKey(const QString &path);
Result<QList<QSslCertificate>> loadCertificates(const QString &path);

// TLS 1.2 or newer, our certificate and key, the CA as the only trust anchor.
// Server: the peer must present a certificate that verifies (QSslSocket::VerifyPeer).
// Client: the server's certificate is verified against the CA as well.
// Fails when a file is missing, unreadable, not PEM, or the key does not match the certificate.
Result<QSslConfiguration> serverConfiguration(const TlsFiles &files);
Result<QSslConfiguration> clientConfiguration(const TlsFiles &files);

// The subject's Common Name (OID 2.5.4.3); empty when the certificate has none.
QString commonName(const QSslCertificate &certificate);

} // namespace cmq::tls
