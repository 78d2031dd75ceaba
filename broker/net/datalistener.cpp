#include "net/datalistener.h"

#include <unistd.h>

#include <QTimer>

#include "limits/ratelimiter.h"
#include "net/netlog.h"
#include "net/tlscontext.h"
#include "net/tlslistener.h"
#include "net/tlsstream.h"

namespace cmq {

DataListener::DataListener(QObject *parent) : QTcpServer(parent)
{
}

DataListener::~DataListener() = default;

void DataListener::incomingConnection(qintptr descriptor)
{
    if (!m_context) {
        ::close(int(descriptor));
        return;
    }
    TlsListener::setAcceptedSocketOptions(int(descriptor));
    auto *stream = new TlsStream(int(descriptor), m_context, this);
    const QHostAddress peer = stream->peerAddress();
    const QString ipKey = limits::RateLimiter::ipKey(peer);
    const HandshakeGate::Refusal refusal = m_gate.enter(ipKey);
    if (refusal != HandshakeGate::Refusal::None) {
        // Nothing can be said before TLS is up; the peer sees the close. Its retry will find a
        // slot once the slow handshakes time out.
        qCInfo(lcListener, "closed %s at once: %d handshakes in progress (%d from it)",
               qPrintable(ipKey), m_gate.inProgress(), m_gate.inProgressFrom(ipKey));
        stream->abort();
        stream->deleteLater();
        Q_EMIT handshakeRefused(peer, HandshakeGate::refusalReason(refusal));
        return;
    }
    auto *slot = new HandshakeSlot(&m_gate, ipKey, stream);
    qCDebug(lcListener, "connection from %s:%u: TLS handshake started (%d in progress)",
            qPrintable(ipKey), unsigned(stream->peerPort()), m_gate.inProgress());

    auto *deadline = new QTimer(slot);
    deadline->setSingleShot(true);
    connect(deadline, &QTimer::timeout, this, [this, stream, slot] {
        fail(stream, slot, QStringLiteral("timeout"),
             QStringLiteral("no TLS handshake within %1 ms").arg(m_gate.limits().handshakeTimeoutMs));
    });
    deadline->start(m_gate.limits().handshakeTimeoutMs);

    connect(stream, &TlsStream::handshakeFailed, slot,
            [this, stream, slot](const QString &reason, const QString &detail) {
                fail(stream, slot, reason, detail);
            });
    connect(stream, &TlsStream::encrypted, slot, [this, stream, slot] {
        delete slot; // the slot, its deadline and these connections; the count goes down now
        qCDebug(lcListener, "TLS handshake with %s:%u done: %s, %s",
                qPrintable(limits::RateLimiter::ipKey(stream->peerAddress())),
                unsigned(stream->peerPort()), qPrintable(stream->protocolName()),
                qPrintable(stream->cipherName()));
        Q_EMIT ready(stream);
    });
    stream->startServerHandshake();
}

void DataListener::fail(TlsStream *stream, HandshakeSlot *slot, const QString &reason,
                        const QString &detail)
{
    if (slot->failed)
        return; // reported already (an error after the timeout, or the reverse)
    slot->failed = true;
    const QHostAddress peer = stream->peerAddress();
    qCInfo(lcListener, "handshake from %s failed (%s): %s",
           qPrintable(limits::RateLimiter::ipKey(peer)), qPrintable(reason), qPrintable(detail));
    Q_EMIT handshakeFailed(peer, reason, detail);
    stream->abort();
    stream->deleteLater();
}

} // namespace cmq
