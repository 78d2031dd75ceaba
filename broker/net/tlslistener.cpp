#include "net/tlslistener.h"

#include <cerrno>
#include <cstring>
#include <memory>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QSslCipher>
#include <QSslSocket>

#include "net/netlog.h"

namespace cmq {

TlsListener::TlsListener(QObject *parent) : QTcpServer(parent)
{
    connect(&m_gate, &HandshakeGate::refused, this, &TlsListener::handshakeRefused);
    connect(&m_gate, &HandshakeGate::failed, this, &TlsListener::handshakeFailed);
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
    HandshakeSlot *slot = m_gate.admit(socket);
    if (!slot)
        return;

    socket->setSslConfiguration(m_configuration);
    // What Qt reports during the handshake, for failureReason(); the list goes with the slot.
    auto sslErrors = std::make_shared<QList<QSslError>>();
    connect(socket, &QSslSocket::sslErrors, slot,
            [sslErrors](const QList<QSslError> &errors) { *sslErrors += errors; });
    connect(socket, &QAbstractSocket::errorOccurred, slot,
            [socket, slot, sslErrors](QAbstractSocket::SocketError error) {
                if (socket->isEncrypted())
                    return;
                slot->fail(failureReason(error, *sslErrors, socket->errorString()),
                           sslErrors->isEmpty() ? socket->errorString()
                                                : sslErrors->constFirst().errorString());
            });
    connect(socket, &QSslSocket::encrypted, slot, [this, socket, slot] {
        slot->done(socket->sessionCipher().protocolString(), socket->sessionCipher().name());
        Q_EMIT ready(socket);
    });
    socket->startServerEncryption();
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
