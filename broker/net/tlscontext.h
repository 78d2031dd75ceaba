#pragma once
// One OpenSSL server context (SSL_CTX) for every data connection made with a TLS configuration:
// the certificate chain, the key, the CA that vouches for clients, the protocol floor and the
// cipher list, loaded once. Qt's QSslSocket builds a whole SSL_CTX per socket (about 16 KB
// each, and the CA store parsed again per handshake); the data listener shares this one
// (docs/ARCHITECTURE.md, "A connection's memory"). A reload makes a new one; connections made
// before keep theirs until they close.

#include <memory>

#include <QSslConfiguration>

#include "util/result.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace cmq {

class TlsContext final
{
public:
    // From the configuration tls::serverConfiguration() made (common/tls/tlsidentity.h): the
    // same material and policy the admin listener's QSslSocket gets.
    static Result<std::shared_ptr<const TlsContext>>
    fromConfiguration(const QSslConfiguration &configuration);
    ~TlsContext();
    TlsContext(const TlsContext &) = delete;
    TlsContext &operator=(const TlsContext &) = delete;

    SSL_CTX *get() const { return m_context; }

private:
    explicit TlsContext(SSL_CTX *context) : m_context(context) {}
    SSL_CTX *m_context;
};

} // namespace cmq
