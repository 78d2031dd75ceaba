#include "net/datalistener.h"

#include <unistd.h>

#include "net/tlscontext.h"
#include "net/tlslistener.h"
#include "net/tlsstream.h"

namespace cmq {

DataListener::DataListener(QObject *parent) : QTcpServer(parent)
{
    connect(&m_gate, &HandshakeGate::refused, this, &DataListener::handshakeRefused);
    connect(&m_gate, &HandshakeGate::failed, this, &DataListener::handshakeFailed);
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
    HandshakeSlot *slot = m_gate.admit(stream);
    if (!slot)
        return;
    connect(stream, &TlsStream::handshakeFailed, slot,
            [slot](const QString &reason, const QString &detail) { slot->fail(reason, detail); });
    connect(stream, &TlsStream::encrypted, slot, [this, stream, slot] {
        slot->done(stream->protocolName(), stream->cipherName());
        Q_EMIT ready(stream);
    });
    stream->startServerHandshake();
}

} // namespace cmq
