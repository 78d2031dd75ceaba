#pragma once
// One data connection's TLS, done directly with OpenSSL on the accepted socket: an SSL object
// from the shared TlsContext, read and written through the descriptor, watched through the
// thread's epoll set (SocketWatch). It replaces QSslSocket on the data listener because of what an
// idle connection keeps (docs/ARCHITECTURE.md, "A connection's memory"): no SSL_CTX of its own, no
// Qt read or write chunks; plaintext is held only while there is some (reads go through one buffer
// per thread). The interface is the part of QSslSocket's that Session and Broker use.
//
// Writes within one pass of the event loop are sent together (one TLS record per 16 KB, not
// per reply line), like QSslSocket does.

#include <memory>

#include <QAbstractSocket>
#include <QByteArray>
#include <QHostAddress>
#include <QObject>
#include <QSslCertificate>

typedef struct ssl_st SSL;

namespace cmq {

class SocketWatch;
class TlsContext;

class TlsStream final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TlsStream)

public:
    // Takes ownership of the accepted, connected `descriptor`. With -1 (or no context) the
    // stream never connects: for unit tests of what sits on it.
    TlsStream(int descriptor, std::shared_ptr<const TlsContext> context,
              QObject *parent = nullptr);
    ~TlsStream() override;

    // Server side of the handshake; ends in encrypted() or handshakeFailed().
    void startServerHandshake();

    QAbstractSocket::SocketState state() const { return m_state; }
    bool isEncrypted() const { return m_encrypted && m_state == QAbstractSocket::ConnectedState; }
    int descriptor() const { return m_fd; }
    QHostAddress peerAddress() const { return m_peerAddress; }
    quint16 peerPort() const { return m_peerPort; }
    // Verified against the CA during the handshake (null before it).
    QSslCertificate peerCertificate() const;
    QString protocolName() const;
    QString cipherName() const;

    // Plaintext received and not read yet. Reading stops while this many bytes wait (the
    // kernel's TCP window pushes back on the peer).
    void setReadBufferSize(qint64 bytes) { m_readLimit = bytes; }
    qint64 bytesAvailable() const { return m_in.size() - m_inOffset; }
    QByteArray read(qint64 maxBytes);
    QByteArray readAll() { return read(bytesAvailable()); }

    // Queued and sent at the end of this pass of the event loop. Returns -1 once closing.
    qint64 write(const QByteArray &data);
    // Plaintext written and not yet taken by the kernel.
    qint64 bytesToWrite() const { return m_out.size() - m_outOffset; }

    // Sends what is queued, then close_notify, then closes; disconnected() follows.
    void disconnectFromHost();
    // Closes at once, without disconnected().
    void abort();

Q_SIGNALS:
    void encrypted();
    // reason: a TlsListener::failureReason() label ("no_certificate", "certificate_expired",
    // "untrusted_certificate", "protocol_error", "closed_by_peer", "network_error", ...).
    void handshakeFailed(const QString &reason, const QString &detail);
    void readyRead();
    void bytesWritten(qint64 bytes);
    // The connection is closed (by the peer, an error, or disconnectFromHost()).
    void disconnected();

private:
    void onReadable();
    void onWritable();
    void continueHandshake();
    // Decrypts what the socket holds into m_in, up to the read limit.
    void pull();
    void flush();
    void scheduleFlush();
    // Waits for the socket to become readable / writable (for OpenSSL's WANT_READ / WANT_WRITE).
    void watchWritable(bool on);
    void watchReadable(bool on);
    // An SSL read or write after the handshake failed: the peer's orderly end, or an error.
    void onStreamEnded();
    void closeNow(bool sendCloseNotify);
    void failHandshake(const QString &reason, const QString &detail);

    int m_fd;
    std::shared_ptr<const TlsContext> m_context;
    SSL *m_ssl = nullptr;
    SocketWatch *m_watch = nullptr;
    QAbstractSocket::SocketState m_state = QAbstractSocket::ConnectedState;
    bool m_encrypted = false;
    bool m_closing = false;       // disconnectFromHost() waits for the output to go
    bool m_flushScheduled = false;
    bool m_writeWantsRead = false; // an SSL_write waits for the socket to become readable
    bool m_peerGone = false;      // seen end of stream or an error; closes once m_in is read
    // The socket's last read returned less than asked: nothing more waits in the kernel.
    bool m_socketDrained = false;
    QHostAddress m_peerAddress;
    quint16 m_peerPort = 0;
    QByteArray m_in;
    qsizetype m_inOffset = 0;
    QByteArray m_out;
    qsizetype m_outOffset = 0;
    qint64 m_readLimit = 1 << 20;
    mutable QSslCertificate m_peerCertificate;
};

} // namespace cmq
