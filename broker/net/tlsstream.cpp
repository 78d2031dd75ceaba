#include "net/tlsstream.h"

#include <array>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "net/socketwatch.h"
#include "net/tlscontext.h"

namespace cmq {

namespace {

// One SSL_write call's slice of the output: OpenSSL cuts it into 16 KB records.
constexpr qsizetype kWriteSlice = 64 * 1024;
// Output already sent is dropped from the front of the buffer once it is this large.
constexpr qsizetype kCompactOutputAt = 256 * 1024;

// Decrypted input lands here first, and is copied out only as far as there is some: an idle
// connection keeps no read buffer of its own.
constexpr int kReadScratchSize = 64 * 1024;
char *readScratch()
{
    thread_local std::array<char, kReadScratchSize> scratch;
    return scratch.data();
}

QString verifyFailureReason(long result)
{
    switch (result) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
        return QStringLiteral("certificate_expired");
    case X509_V_ERR_CERT_NOT_YET_VALID:
        return QStringLiteral("certificate_not_yet_valid");
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
    case X509_V_ERR_CERT_UNTRUSTED:
    case X509_V_ERR_CERT_REJECTED:
    case X509_V_ERR_INVALID_CA:
        return QStringLiteral("untrusted_certificate");
    default:
        return QStringLiteral("certificate_error");
    }
}

// Called by OpenSSL around each read of the socket BIO: after a read that returned fewer bytes
// than asked for, the kernel's receive queue was empty, so pull() need not ask again only to be
// told EAGAIN (one read call less per request at W=1, where each request arrives alone;
// bench/README.md, "Fewer system calls per message"). QSocketNotifier is level-triggered: bytes
// arriving after that read still wake onReadable().
long noteShortReads(BIO *bio, int operation, const char *, size_t asked, int, long, int result,
                    size_t *processed)
{
    if (operation == (BIO_CB_READ | BIO_CB_RETURN) && result > 0 && processed) {
        if (auto *drained = reinterpret_cast<bool *>(BIO_get_callback_arg(bio)))
            *drained = *processed < asked;
    }
    return result;
}

// The most recent entry of this thread's OpenSSL error queue (emptied), and its reason code.
QString takeSslErrorText(int *reason)
{
    unsigned long code = 0;
    unsigned long last = 0;
    while ((code = ERR_get_error()) != 0)
        last = code;
    *reason = last ? ERR_GET_REASON(last) : 0;
    if (!last)
        return {};
    char text[256];
    ERR_error_string_n(last, text, sizeof text);
    return QString::fromLatin1(text);
}

} // namespace

TlsStream::TlsStream(int descriptor, std::shared_ptr<const TlsContext> context, QObject *parent)
    : QObject(parent), m_fd(descriptor), m_context(std::move(context))
{
    if (m_fd < 0 || !m_context) {
        m_state = QAbstractSocket::UnconnectedState; // never connects (unit tests)
        return;
    }
    ::fcntl(m_fd, F_SETFL, ::fcntl(m_fd, F_GETFL) | O_NONBLOCK);
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (::getpeername(m_fd, reinterpret_cast<sockaddr *>(&address), &length) == 0) {
        m_peerAddress = QHostAddress(reinterpret_cast<const sockaddr *>(&address));
        if (address.ss_family == AF_INET)
            m_peerPort = ntohs(reinterpret_cast<const sockaddr_in *>(&address)->sin_port);
        else if (address.ss_family == AF_INET6)
            m_peerPort = ntohs(reinterpret_cast<const sockaddr_in6 *>(&address)->sin6_port);
    }
    m_ssl = SSL_new(m_context->get());
    if (m_ssl) {
        SSL_set_fd(m_ssl, m_fd);
        SSL_set_accept_state(m_ssl);
        if (BIO *socket = SSL_get_rbio(m_ssl)) {
            BIO_set_callback_arg(socket, reinterpret_cast<char *>(&m_socketDrained));
            BIO_set_callback_ex(socket, noteShortReads);
        }
    }
    m_watch = new SocketWatch(m_fd, this); // reading on, writing off
    connect(m_watch, &SocketWatch::readable, this, &TlsStream::onReadable);
    connect(m_watch, &SocketWatch::writable, this, &TlsStream::onWritable);
}

TlsStream::~TlsStream()
{
    closeNow(false);
}

void TlsStream::startServerHandshake()
{
    if (!m_ssl)
        return failHandshake(QStringLiteral("protocol_error"),
                             QStringLiteral("cannot create the TLS session"));
    continueHandshake();
}

void TlsStream::continueHandshake()
{
    ERR_clear_error();
    const int result = SSL_do_handshake(m_ssl);
    if (result == 1) {
        m_encrypted = true;
        watchWritable(false);
        watchReadable(true);
        pull(); // requests may have come with the end of the handshake
        if (m_state == QAbstractSocket::ConnectedState)
            Q_EMIT encrypted();
        return;
    }
    const int error = SSL_get_error(m_ssl, result);
    if (error == SSL_ERROR_WANT_READ) {
        watchWritable(false);
        return watchReadable(true);
    }
    if (error == SSL_ERROR_WANT_WRITE)
        return watchWritable(true);
    const int savedErrno = errno;
    int reason = 0;
    const QString text = takeSslErrorText(&reason);
    const long verify = SSL_get_verify_result(m_ssl);
    if (verify != X509_V_OK)
        return failHandshake(verifyFailureReason(verify),
                             QString::fromLatin1(X509_verify_cert_error_string(verify)));
    if (reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE)
        return failHandshake(QStringLiteral("no_certificate"), text);
    if (error == SSL_ERROR_SSL)
        return failHandshake(QStringLiteral("protocol_error"), text);
    if (error == SSL_ERROR_ZERO_RETURN || (error == SSL_ERROR_SYSCALL && savedErrno == 0) ||
        savedErrno == ECONNRESET)
        return failHandshake(QStringLiteral("closed_by_peer"),
                             QStringLiteral("the peer closed the connection during the handshake"));
    failHandshake(QStringLiteral("network_error"), QString::fromLocal8Bit(strerror(savedErrno)));
}

void TlsStream::failHandshake(const QString &reason, const QString &detail)
{
    if (m_state == QAbstractSocket::UnconnectedState)
        return;
    closeNow(false);
    Q_EMIT handshakeFailed(reason, detail);
}

QSslCertificate TlsStream::peerCertificate() const
{
    if (m_peerCertificate.isNull() && m_ssl && m_encrypted) {
        if (X509 *peer = SSL_get0_peer_certificate(m_ssl)) {
            unsigned char *der = nullptr;
            const int length = i2d_X509(peer, &der);
            if (length > 0)
                m_peerCertificate = QSslCertificate(
                    QByteArray(reinterpret_cast<const char *>(der), length), QSsl::Der);
            OPENSSL_free(der);
        }
    }
    return m_peerCertificate;
}

QString TlsStream::protocolName() const
{
    return m_ssl ? QString::fromLatin1(SSL_get_version(m_ssl)) : QString();
}

QString TlsStream::cipherName() const
{
    return m_ssl ? QString::fromLatin1(SSL_get_cipher_name(m_ssl)) : QString();
}

void TlsStream::onReadable()
{
    if (!m_encrypted)
        return continueHandshake();
    if (m_writeWantsRead) {
        m_writeWantsRead = false;
        flush();
    }
    const qint64 before = bytesAvailable();
    pull();
    if (bytesAvailable() > before)
        Q_EMIT readyRead();
}

void TlsStream::onWritable()
{
    watchWritable(false);
    if (!m_encrypted)
        return continueHandshake();
    flush();
    // A read that needed to write first (TLS 1.3 key update, or an alert): read again.
    if (m_state == QAbstractSocket::ConnectedState && !m_peerGone && !m_closing) {
        const qint64 before = bytesAvailable();
        pull();
        if (bytesAvailable() > before)
            Q_EMIT readyRead();
    }
}

void TlsStream::pull()
{
    if (!m_ssl || m_peerGone || m_closing || m_state != QAbstractSocket::ConnectedState)
        return;
    while (bytesAvailable() < m_readLimit) {
        ERR_clear_error();
        const int room = int(qMin<qint64>(kReadScratchSize, m_readLimit - bytesAvailable()));
        const int n = SSL_read(m_ssl, readScratch(), room);
        if (n > 0) {
            if (m_inOffset > 0 && m_inOffset >= m_in.size() / 2) {
                m_in.remove(0, m_inOffset);
                m_inOffset = 0;
            }
            m_in.append(readScratch(), n);
            if (m_socketDrained && !SSL_has_pending(m_ssl))
                return watchReadable(true);
            continue;
        }
        const int error = SSL_get_error(m_ssl, n);
        if (error == SSL_ERROR_WANT_READ)
            return watchReadable(true);
        if (error == SSL_ERROR_WANT_WRITE)
            return watchWritable(true);
        return onStreamEnded();
    }
    watchReadable(false); // full: read() resumes
}

QByteArray TlsStream::read(qint64 maxBytes)
{
    const qint64 n = qMin(maxBytes, bytesAvailable());
    QByteArray out;
    if (n > 0 && m_inOffset == 0 && n == m_in.size()) {
        out = std::exchange(m_in, QByteArray());
    } else if (n > 0) {
        out = m_in.mid(m_inOffset, n);
        m_inOffset += n;
        if (m_inOffset == m_in.size()) {
            m_in = QByteArray(); // nothing kept while idle
            m_inOffset = 0;
        }
    }
    // Reading had stopped at the limit; what OpenSSL or the kernel holds is read now.
    if (m_watch && !m_watch->isReadEnabled() && m_encrypted && !m_writeWantsRead)
        pull();
    return out;
}

qint64 TlsStream::write(const QByteArray &data)
{
    if (m_state != QAbstractSocket::ConnectedState || m_closing || !m_encrypted || m_peerGone)
        return -1;
    if (data.isEmpty())
        return 0;
    if (bytesToWrite() == 0) {
        m_out = data; // shared, not copied, until more is appended
        m_outOffset = 0;
    } else {
        m_out.append(data);
    }
    scheduleFlush();
    return data.size();
}

void TlsStream::scheduleFlush()
{
    if (m_flushScheduled)
        return;
    m_flushScheduled = true;
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_flushScheduled = false;
            flush();
        },
        Qt::QueuedConnection);
}

void TlsStream::flush()
{
    if (!m_ssl || !m_encrypted || m_peerGone || m_state == QAbstractSocket::UnconnectedState)
        return;
    qint64 written = 0;
    while (bytesToWrite() > 0) {
        ERR_clear_error();
        const int length = int(qMin<qsizetype>(bytesToWrite(), kWriteSlice));
        const int n = SSL_write(m_ssl, m_out.constData() + m_outOffset, length);
        if (n > 0) {
            m_outOffset += n;
            written += n;
            continue;
        }
        const int error = SSL_get_error(m_ssl, n);
        if (error == SSL_ERROR_WANT_WRITE) {
            watchWritable(true);
            break;
        }
        if (error == SSL_ERROR_WANT_READ) {
            m_writeWantsRead = true;
            watchReadable(true);
            break;
        }
        onStreamEnded();
        return;
    }
    if (bytesToWrite() == 0) {
        m_out = QByteArray(); // nothing kept while idle
        m_outOffset = 0;
    } else if (m_outOffset >= kCompactOutputAt) {
        // Allowed mid-record: SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, and the unsent bytes move
        // with the data.
        m_out.remove(0, m_outOffset);
        m_outOffset = 0;
    }
    if (written > 0)
        Q_EMIT bytesWritten(written);
    if (m_closing && bytesToWrite() == 0 && m_state != QAbstractSocket::UnconnectedState) {
        closeNow(true);
        Q_EMIT disconnected();
    }
}

void TlsStream::onStreamEnded()
{
    ERR_clear_error();
    // The end of the stream or a broken connection. Whatever was read before it is still
    // there to read; the close follows in a later pass, so this caller finishes first.
    m_peerGone = true;
    watchReadable(false);
    watchWritable(false);
    QMetaObject::invokeMethod(
        this,
        [this] {
            if (m_state == QAbstractSocket::UnconnectedState)
                return;
            closeNow(false);
            Q_EMIT disconnected();
        },
        Qt::QueuedConnection);
}

void TlsStream::disconnectFromHost()
{
    if (m_state == QAbstractSocket::UnconnectedState || m_closing)
        return;
    m_closing = true;
    watchReadable(false);
    if (m_encrypted && !m_peerGone && bytesToWrite() > 0) {
        m_state = QAbstractSocket::ClosingState;
        return flush(); // closes once written
    }
    closeNow(m_encrypted && !m_peerGone);
    Q_EMIT disconnected();
}

void TlsStream::abort()
{
    m_closing = true;
    closeNow(false);
}

void TlsStream::closeNow(bool sendCloseNotify)
{
    if (m_state == QAbstractSocket::UnconnectedState)
        return;
    m_state = QAbstractSocket::UnconnectedState;
    if (m_ssl) {
        if (sendCloseNotify) {
            ERR_clear_error();
            SSL_shutdown(m_ssl); // one attempt; the peer need not answer
        }
        peerCertificate(); // kept for whoever asks after the close
        SSL_free(m_ssl);
        m_ssl = nullptr;
    }
    ERR_clear_error();
    delete m_watch; // before the descriptor closes: it leaves the epoll set by it
    m_watch = nullptr;
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
    m_out = QByteArray();
    m_outOffset = 0;
}

void TlsStream::watchReadable(bool on)
{
    if (m_watch)
        m_watch->setReadEnabled(on);
}

void TlsStream::watchWritable(bool on)
{
    if (m_watch)
        m_watch->setWriteEnabled(on);
}

} // namespace cmq
