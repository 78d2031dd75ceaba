#pragma once
// One mTLS connection of a publishing thread, done with OpenSSL directly on a blocking socket:
// the shape of rabbitmq-load's connections (a thread each, reads that block in the kernel), so
// the two load generators of bench/compare.sh pay the same per message. Over QSslSocket and an
// event loop per thread, 64 publishers took more than half a core at 64 × W=1 on a two-core
// machine, CPU the broker under test could not have (bench/README.md, "A load generator that
// leaves the cores to the broker").

#include <functional>
#include <memory>

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <openssl/ssl.h>

#include "tls/openssl.h"

namespace cmq::bench {

// What every connection of one identity shares: certificate, key and the CA that signs the
// broker's certificate (SSL_CTX is safe to share between threads once set up). Null with `error`
// set when the files do not load.
std::shared_ptr<SSL_CTX> loadClientContext(const QString &certDir, const QString &identity,
                                           QString *error);

class TlsLineSocket
{
public:
    explicit TlsLineSocket(std::shared_ptr<SSL_CTX> context);
    ~TlsLineSocket();
    TlsLineSocket(const TlsLineSocket &) = delete;
    TlsLineSocket &operator=(const TlsLineSocket &) = delete;

    // Connects and completes the handshake, verifying the broker's certificate for `host`.
    bool open(const QString &host, quint16 port);
    // Sends all of `bytes`, blocking while the kernel's buffer is full.
    bool writeAll(QByteArrayView bytes);

    enum class ReadResult { Lines, TimedOut, Closed };
    // Waits at most `timeoutUs` for input (-1: no limit), then hands every complete line read
    // (without its '\n') to `onLine`. Closed: the peer ended the connection or an error did.
    ReadResult readLines(qint64 timeoutUs, const std::function<void(QByteArrayView)> &onLine);

    // close_notify, then the descriptor closed.
    void close();
    QString errorString() const { return m_error; }

private:
    bool fail(const QString &what);

    std::shared_ptr<SSL_CTX> m_context;
    tls::OpenSslPtr<SSL, SSL_free> m_ssl;
    int m_fd = -1;
    QByteArray m_buffer; // a partial line left from the previous read
    QString m_error;
};

} // namespace cmq::bench
