#include "net/tlslistener.h"

#include <cerrno>
#include <cstring>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QPointer>
#include <QSslCipher>
#include <QSslSocket>
#include <QTimer>

#include "limits/ratelimiter.h"
#include "net/netlog.h"

namespace cmq {

TlsListener::TlsListener(QObject *parent) : QTcpServer(parent)
{
}

void TlsListener::setAcceptedSocketOptions(QAbstractSocket *socket)
{
    setAcceptedSocketOptions(int(socket->socketDescriptor()));
}

void TlsListener::setAcceptedSocketOptions(int fd)
{
    // Replies and deliveries are small writes that must leave at once: Nagle's algorithm would
    // hold one back until the previous one is acknowledged (up to the peer's delayed-ACK time).
    // Keepalive notices a peer that vanished without a FIN (crashed host, dropped NAT entry)
    // even when the protocol is quiet: first probe after 60 s idle, then every 10 s, given up
    // after 6; the Linux default would wait two hours.
    const int on = 1;
    if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0 ||
        ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on) != 0)
        qCWarning(lcListener, "cannot set TCP_NODELAY and SO_KEEPALIVE: %s", strerror(errno));
    const int idleSec = 60, intervalSec = 10, probes = 6;
    if (::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idleSec, sizeof idleSec) != 0 ||
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intervalSec, sizeof intervalSec) != 0 ||
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes) != 0)
        qCWarning(lcListener, "cannot set the keepalive times: %s", strerror(errno));
}

TlsListener::~TlsListener() = default;

void TlsListener::setSslConfiguration(const QSslConfiguration &configuration)
{
    m_configuration = configuration;
}

// What an idle connection costs (docs/ARCHITECTURE.md, "A connection's memory"): Qt's OpenSSL
// backend already sets SSL_MODE_RELEASE_BUFFERS on the SSL_CTX it makes for every QSslSocket,
// so OpenSSL's record buffers are freed while the connection is quiet; Qt 6.4 gives no sound way
// to reach the SSL* or share one SSL_CTX, and its backend options (SSL_CONF_cmd without the
// server flag) cannot set server-only settings such as NumTickets. What remains per socket is
// that SSL_CTX, the SSL object, and the read and write chunks Qt's buffers keep once allocated.
void TlsListener::incomingConnection(qintptr descriptor)
{
    auto *socket = new QSslSocket(this);
    if (!socket->setSocketDescriptor(descriptor)) {
        qCWarning(lcListener, "cannot adopt an accepted connection: %s",
                  qPrintable(socket->errorString()));
        delete socket;
        ::close(int(descriptor));
        return;
    }
    setAcceptedSocketOptions(socket);
    const QHostAddress peer = socket->peerAddress();
    const QString ipKey = limits::RateLimiter::ipKey(peer);
    const HandshakeGate::Refusal refusal = m_gate.enter(ipKey);
    if (refusal != HandshakeGate::Refusal::None) {
        // Nothing can be said before TLS is up; the peer sees the close. Its retry will find a
        // slot once the slow handshakes time out.
        qCInfo(lcListener, "closed %s at once: %d handshakes in progress (%d from it)",
               qPrintable(ipKey), m_gate.inProgress(), m_gate.inProgressFrom(ipKey));
        socket->abort();
        socket->deleteLater();
        Q_EMIT handshakeRefused(peer, HandshakeGate::refusalReason(refusal));
        return;
    }
    auto *slot = new HandshakeSlot(&m_gate, ipKey, socket);
    qCDebug(lcListener, "connection from %s:%u: TLS handshake started (%d in progress)",
            qPrintable(ipKey), unsigned(socket->peerPort()), m_gate.inProgress());

    socket->setSslConfiguration(m_configuration);
    auto *deadline = new QTimer(slot);
    deadline->setSingleShot(true);
    connect(deadline, &QTimer::timeout, this, [this, socket, slot] {
        fail(socket, slot, QStringLiteral("timeout"),
             QStringLiteral("no TLS handshake within %1 ms").arg(m_gate.limits().handshakeTimeoutMs));
    });
    deadline->start(m_gate.limits().handshakeTimeoutMs);

    connect(socket, &QSslSocket::sslErrors, slot,
            [slot](const QList<QSslError> &errors) { slot->sslErrors += errors; });
    connect(socket, &QAbstractSocket::errorOccurred, slot,
            [this, socket, slot](QAbstractSocket::SocketError error) {
                if (socket->isEncrypted())
                    return;
                fail(socket, slot, failureReason(error, slot->sslErrors, socket->errorString()),
                     slot->sslErrors.isEmpty() ? socket->errorString()
                                               : slot->sslErrors.constFirst().errorString());
            });
    connect(socket, &QSslSocket::encrypted, slot, [this, socket, slot] {
        delete slot; // the slot, its deadline and these connections; the count goes down now
        qCDebug(lcListener, "TLS handshake with %s:%u done: %s, %s",
                qPrintable(limits::RateLimiter::ipKey(socket->peerAddress())),
                unsigned(socket->peerPort()), qPrintable(socket->sessionCipher().protocolString()),
                qPrintable(socket->sessionCipher().name()));
        Q_EMIT ready(socket);
    });
    socket->startServerEncryption();
}

void TlsListener::fail(QSslSocket *socket, HandshakeSlot *slot, const QString &reason,
                       const QString &detail)
{
    if (slot->failed)
        return; // reported already (an error after the timeout, or the reverse)
    slot->failed = true;
    const QHostAddress peer = socket->peerAddress();
    qCInfo(lcListener, "handshake from %s failed (%s): %s",
           qPrintable(limits::RateLimiter::ipKey(peer)), qPrintable(reason), qPrintable(detail));
    Q_EMIT handshakeFailed(peer, reason, detail);
    socket->abort();
    socket->deleteLater();
}

QString TlsListener::failureReason(QAbstractSocket::SocketError error,
                                   const QList<QSslError> &sslErrors, const QString &errorText)
{
    for (const QSslError &e : sslErrors) {
        switch (e.error()) {
        case QSslError::NoPeerCertificate:
            return QStringLiteral("no_certificate");
        case QSslError::CertificateExpired:
            return QStringLiteral("certificate_expired");
        case QSslError::CertificateNotYetValid:
            return QStringLiteral("certificate_not_yet_valid");
        case QSslError::UnableToGetIssuerCertificate:
        case QSslError::UnableToGetLocalIssuerCertificate:
        case QSslError::UnableToVerifyFirstCertificate:
        case QSslError::SelfSignedCertificate:
        case QSslError::SelfSignedCertificateInChain:
        case QSslError::CertificateSignatureFailed:
        case QSslError::CertificateUntrusted:
        case QSslError::CertificateRejected:
        case QSslError::InvalidCaCertificate:
            return QStringLiteral("untrusted_certificate");
        default:
            break;
        }
    }
    if (!sslErrors.isEmpty())
        return QStringLiteral("certificate_error");
    switch (error) {
    case QAbstractSocket::SslHandshakeFailedError:
        // OpenSSL refuses a missing client certificate inside the handshake, without a
        // QSslError; its text is the only clue.
        if (errorText.contains(QLatin1String("did not return a certificate"),
                               Qt::CaseInsensitive) ||
            errorText.contains(QLatin1String("certificate required"), Qt::CaseInsensitive))
            return QStringLiteral("no_certificate");
        return QStringLiteral("protocol_error");
    case QAbstractSocket::RemoteHostClosedError:
        return QStringLiteral("closed_by_peer");
    case QAbstractSocket::SocketTimeoutError:
        return QStringLiteral("timeout");
    default:
        return QStringLiteral("network_error");
    }
}

} // namespace cmq
