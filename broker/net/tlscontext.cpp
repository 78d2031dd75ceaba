#include "net/tlscontext.h"

#include <QSslCertificate>
#include <QSslKey>

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "tls/openssl.h"

namespace cmq {

namespace {

tls::X509Ptr toX509(const QSslCertificate &certificate)
{
    const QByteArray der = certificate.toDer();
    const auto *data = reinterpret_cast<const unsigned char *>(der.constData());
    return tls::X509Ptr(d2i_X509(nullptr, &data, long(der.size())));
}

Result<std::shared_ptr<const TlsContext>> failed(const QString &what)
{
    return Result<std::shared_ptr<const TlsContext>>::failure(
        QStringLiteral("TLS context: %1: %2").arg(what, tls::takeOpenSslError()));
}

} // namespace

Result<std::shared_ptr<const TlsContext>>
TlsContext::fromConfiguration(const QSslConfiguration &configuration)
{
    SSL_CTX *raw = SSL_CTX_new(TLS_server_method());
    if (!raw)
        return failed(QStringLiteral("cannot create"));
    // Owned from here, so every early return frees it.
    std::shared_ptr<const TlsContext> context(new TlsContext(raw));

    // Idle connections hold no record buffers; a write may complete record by record and be
    // retried from a buffer that has since grown (the connection appends while it waits).
    SSL_CTX_set_mode(raw, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    // Read what the socket has into the record buffer in one read(2), instead of a 5-byte
    // header and then the record, two system calls per record (TlsStream::pull() reads until
    // OpenSSL wants more, so nothing is left waiting in that buffer; it is still released when
    // empty).
    SSL_CTX_set_read_ahead(raw, 1);
    SSL_CTX_set_min_proto_version(raw, TLS1_2_VERSION);
    // No resumption: clients reconnect rarely, and tickets cost a signature-free but needless
    // encryption per handshake. No renegotiation, which TLS 1.2 clients could otherwise start.
    SSL_CTX_set_num_tickets(raw, 0);
    SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(raw, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    const QByteArray ciphers =
        configuration.backendConfiguration().value(QByteArrayLiteral("CipherString")).toByteArray();
    if (!ciphers.isEmpty() && SSL_CTX_set_cipher_list(raw, ciphers.constData()) != 1)
        return failed(QStringLiteral("cipher list %1").arg(QString::fromLatin1(ciphers)));

    const QList<QSslCertificate> chain = configuration.localCertificateChain();
    if (chain.isEmpty())
        return failed(QStringLiteral("no certificate"));
    for (qsizetype i = 0; i < chain.size(); ++i) {
        tls::X509Ptr certificate = toX509(chain.at(i));
        if (!certificate)
            return failed(QStringLiteral("certificate %1 of the chain").arg(i));
        const int ok = i == 0 ? SSL_CTX_use_certificate(raw, certificate.get())
                              : SSL_CTX_add1_chain_cert(raw, certificate.get());
        if (ok != 1)
            return failed(QStringLiteral("certificate %1 of the chain").arg(i));
    }
    QByteArray keyPem = configuration.privateKey().toPem(); // PKCS#8, never encrypted here
    tls::BioPtr keyBio = tls::memoryBio(keyPem);
    tls::PkeyPtr key(PEM_read_bio_PrivateKey(keyBio.get(), nullptr, nullptr, nullptr));
    keyPem.fill('\0');
    if (!key || SSL_CTX_use_PrivateKey(raw, key.get()) != 1 || SSL_CTX_check_private_key(raw) != 1)
        return failed(QStringLiteral("private key"));

    // Only our CA vouches for a client: no system roots.
    X509_STORE *store = SSL_CTX_get_cert_store(raw);
    for (const QSslCertificate &ca : configuration.caCertificates()) {
        tls::X509Ptr certificate = toX509(ca);
        if (!certificate || X509_STORE_add_cert(store, certificate.get()) != 1)
            return failed(QStringLiteral("CA certificate %1").arg(ca.subjectDisplayName()));
    }
    // A client without a certificate fails inside the handshake, with an alert.
    SSL_CTX_set_verify(raw, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    tls::takeOpenSslError(); // nothing stale for the first handshake to find
    return context;
}

TlsContext::~TlsContext()
{
    SSL_CTX_free(m_context);
}

} // namespace cmq
