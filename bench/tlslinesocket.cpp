#include "tlslinesocket.h"

#include <cerrno>
#include <cstring>

#include <QDir>
#include <QFile>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tls/openssl.h"
#include "tls/tlsidentity.h"

namespace cmq::bench {

std::shared_ptr<SSL_CTX> loadClientContext(const QString &certDir, const QString &identity,
                                           QString *error)
{
    const std::shared_ptr<SSL_CTX> context(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
    SSL_CTX *ctx = context.get();
    if (!ctx) {
        *error = QStringLiteral("SSL_CTX_new: %1").arg(tls::takeOpenSslError());
        return nullptr;
    }
    const QDir dir(certDir);
    const QByteArray cert = QFile::encodeName(dir.filePath(identity + ".crt"));
    const QByteArray key = QFile::encodeName(dir.filePath(identity + ".key"));
    const QByteArray ca = QFile::encodeName(dir.filePath(QStringLiteral("ca.crt")));
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    // The client library's TLS 1.2 suites; TLS 1.3's are OpenSSL's defaults on both sides, so
    // the broker picks the same suite as for a QSslSocket client.
    if (SSL_CTX_set_cipher_list(ctx, tls::kTls12Ciphers) != 1 ||
        SSL_CTX_use_certificate_chain_file(ctx, cert.constData()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, key.constData(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1 ||
        SSL_CTX_load_verify_locations(ctx, ca.constData(), nullptr) != 1) {
        *error = QStringLiteral("%1: %2").arg(identity, tls::takeOpenSslError());
        return nullptr;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    // A record that carries no data (the session tickets a TLS 1.3 server sends after the
    // handshake) ends SSL_read with WANT_READ instead of a second, blocking read: a fixed-rate
    // publisher must not sleep past its next publish inside SSL_read.
    SSL_CTX_clear_mode(ctx, SSL_MODE_AUTO_RETRY);
    return context;
}

TlsLineSocket::TlsLineSocket(std::shared_ptr<SSL_CTX> context) : m_context(std::move(context))
{
}

TlsLineSocket::~TlsLineSocket()
{
    m_ssl.reset(); // before the descriptor it uses
    if (m_fd >= 0)
        ::close(m_fd);
}

bool TlsLineSocket::fail(const QString &what)
{
    m_error = what;
    return false;
}

bool TlsLineSocket::open(const QString &host, quint16 port)
{
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    const QByteArray hostName = host.toUtf8();
    const int lookup =
        getaddrinfo(hostName.constData(), QByteArray::number(port).constData(), &hints, &found);
    if (lookup != 0)
        return fail(QStringLiteral("%1: %2").arg(host, QString::fromUtf8(gai_strerror(lookup))));
    for (addrinfo *a = found; a && m_fd < 0; a = a->ai_next) {
        m_fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (m_fd >= 0 && ::connect(m_fd, a->ai_addr, a->ai_addrlen) != 0) {
            m_error = QString::fromUtf8(std::strerror(errno));
            ::close(m_fd);
            m_fd = -1;
        }
    }
    freeaddrinfo(found);
    if (m_fd < 0)
        return fail(QStringLiteral("connect to %1:%2: %3").arg(host).arg(port).arg(m_error));
    const int on = 1;
    ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    // A broker that stops reading for this long fails the run instead of hanging it.
    const timeval stuck{30, 0};
    ::setsockopt(m_fd, SOL_SOCKET, SO_SNDTIMEO, &stuck, sizeof stuck);

    m_ssl.reset(SSL_new(m_context.get()));
    SSL *ssl = m_ssl.get();
    if (!ssl || SSL_set_fd(ssl, m_fd) != 1)
        return fail(QStringLiteral("SSL_new: %1").arg(tls::takeOpenSslError()));
    // The broker's certificate must name `host`, as QSslSocket checks it: an address against
    // the certificate's IP entries, a name against its DNS entries.
    X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
    if (X509_VERIFY_PARAM_set1_ip_asc(param, hostName.constData()) != 1) {
        SSL_set_tlsext_host_name(ssl, hostName.constData());
        if (SSL_set1_host(ssl, hostName.constData()) != 1)
            return fail(QStringLiteral("SSL_set1_host: %1").arg(tls::takeOpenSslError()));
    }
    if (SSL_connect(ssl) != 1)
        return fail(QStringLiteral("TLS handshake with %1:%2: %3")
                        .arg(host)
                        .arg(port)
                        .arg(tls::takeOpenSslError()));
    return true;
}

bool TlsLineSocket::writeAll(QByteArrayView bytes)
{
    // A blocking socket without SSL_MODE_ENABLE_PARTIAL_WRITE: SSL_write returns once all of it
    // is written.
    if (bytes.isEmpty())
        return true;
    if (SSL_write(m_ssl.get(), bytes.data(), int(bytes.size())) > 0)
        return true;
    return fail(QStringLiteral("write: %1").arg(tls::takeOpenSslError()));
}

TlsLineSocket::ReadResult
TlsLineSocket::readLines(qint64 timeoutUs, const std::function<void(QByteArrayView)> &onLine)
{
    if (SSL_pending(m_ssl.get()) == 0) {
        pollfd watched{m_fd, POLLIN, 0};
        const timespec limit{time_t(timeoutUs / 1'000'000), long(timeoutUs % 1'000'000) * 1000};
        const int ready = ::ppoll(&watched, 1, timeoutUs < 0 ? nullptr : &limit, nullptr);
        if (ready == 0 || (ready < 0 && errno == EINTR))
            return ReadResult::TimedOut;
        if (ready < 0) {
            m_error = QString::fromUtf8(std::strerror(errno));
            return ReadResult::Closed;
        }
    }
    char chunk[16 * 1024]; // one TLS record's worth
    const int got = SSL_read(m_ssl.get(), chunk, int(sizeof chunk));
    if (got <= 0) {
        const int reason = SSL_get_error(m_ssl.get(), got);
        if (reason == SSL_ERROR_WANT_READ)
            return ReadResult::TimedOut; // a record without data, such as a session ticket
        m_error = reason == SSL_ERROR_ZERO_RETURN
                      ? QStringLiteral("the broker closed the connection")
                      : QStringLiteral("read: %1").arg(tls::takeOpenSslError());
        return ReadResult::Closed;
    }
    // Lines are parsed straight from what was read; only a partial last line is kept.
    QByteArrayView input(chunk, got);
    if (!m_buffer.isEmpty()) {
        m_buffer.append(input);
        input = m_buffer;
    }
    qsizetype start = 0;
    for (qsizetype end; (end = input.indexOf('\n', start)) >= 0; start = end + 1)
        onLine(input.sliced(start, end - start));
    const QByteArray rest = input.sliced(start).toByteArray();
    m_buffer = rest;
    return ReadResult::Lines;
}

void TlsLineSocket::close()
{
    if (m_ssl)
        SSL_shutdown(m_ssl.get());
    if (m_fd >= 0)
        ::shutdown(m_fd, SHUT_RDWR);
}

} // namespace cmq::bench
