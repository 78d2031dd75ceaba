#include "admin/adminsession.h"

#include <utility>

#include <QSslSocket>

#include "admin/adminlog.h"
#include "protocol/lineframer.h"

namespace cmq {

AdminSession::AdminSession(QSslSocket *socket, ClientIdentity identity, QObject *parent)
    : QObject(parent), m_socket(socket), m_identity(std::move(identity))
{
    m_socket->setParent(this);
    // Requests are short; a client that floods us meets TCP back-pressure, not our memory.
    m_socket->setReadBufferSize(64 * 1024);
    connect(m_socket, &QSslSocket::readyRead, this, &AdminSession::onReadyRead);
    connect(m_socket, &QSslSocket::encryptedBytesWritten, this, [this] {
        if (!m_busy && isKeepingUp())
            onReadyRead();
    });
    connect(m_socket, &QSslSocket::disconnected, this, &AdminSession::finish);
    connect(m_socket, &QSslSocket::errorOccurred, this, [this](QAbstractSocket::SocketError) {
        if (m_socket->state() != QAbstractSocket::ConnectedState)
            finish();
    });
    connect(&m_watchTimer, &QTimer::timeout, this, [this] { Q_EMIT watchDue(this); });
    QMetaObject::invokeMethod(this, &AdminSession::onReadyRead, Qt::QueuedConnection);
}

AdminSession::~AdminSession() = default;

qint64 AdminSession::unsentBytes() const
{
    return m_socket->bytesToWrite() + m_socket->encryptedBytesToWrite();
}

void AdminSession::onReadyRead()
{
    // Bytes are taken from the socket only while requests can run: otherwise they stay in its
    // bounded buffer and TCP pushes back on the client.
    while (!m_closing && !m_finished) {
        processBuffer();
        if (m_busy || m_closing || !isKeepingUp() || m_socket->bytesAvailable() <= 0)
            return;
        const QByteArray chunk = m_socket->read(16 * 1024);
        if (chunk.isEmpty())
            return;
        m_counters.bytesIn += quint64(chunk.size());
        m_buffer += chunk;
    }
}

void AdminSession::processBuffer()
{
    qsizetype offset = 0;
    while (!m_busy && !m_closing && isKeepingUp()) {
        const protocol::Frame frame =
            protocol::takeLine(QByteArrayView(m_buffer).sliced(offset), admin::MaxRequestLineBytes);
        if (frame.status == protocol::FrameStatus::Incomplete)
            break;
        if (frame.status == protocol::FrameStatus::TooLong) {
            m_buffer.clear();
            offset = 0;
            m_closing = true;
            write("Error: Line too long: the limit is " +
                  QByteArray::number(admin::MaxRequestLineBytes) +
                  " bytes; closing the connection\n");
            m_socket->disconnectFromHost();
            return;
        }
        offset += frame.consumed;
        if (frame.status == protocol::FrameStatus::InvalidUtf8) {
            ++m_counters.requestsIn;
            write("Error: Invalid UTF-8 in request line\n");
            continue;
        }
        if (frame.line.trimmed().isEmpty())
            continue;
        ++m_counters.requestsIn;
        const admin::AdminParseResult parsed = admin::parseAdminRequest(frame.line);
        if (!parsed.ok) {
            write(parsed.errorReply + '\n');
            continue;
        }
        m_busy = true;
        Q_EMIT requestReceived(this, parsed.request); // may call sendReply() right away
    }
    m_buffer.remove(0, offset);
}

void AdminSession::sendReply(const QByteArray &lines)
{
    if (!m_busy)
        return;
    m_busy = false;
    if (!m_finished && !m_closing)
        write(lines);
    if (!m_pendingNotice.isEmpty())
        return closeWithNotice(std::exchange(m_pendingNotice, {}));
    // Next request on a fresh stack: a pipelined burst must not recurse.
    QMetaObject::invokeMethod(this, &AdminSession::onReadyRead, Qt::QueuedConnection);
}

void AdminSession::startWatch(int intervalMs, admin::Sections sections,
                              const admin::SnapshotPaging &paging)
{
    m_watchSections = sections;
    m_watchPaging = paging;
    m_sequence = 0;
    m_watchTimer.start(intervalMs);
}

void AdminSession::stopWatch()
{
    m_watchTimer.stop();
}

void AdminSession::sendSnapshot(const QByteArray &json)
{
    if (m_closing || m_finished)
        return;
    write("Snapshot: " + json + '\n');
}

void AdminSession::write(const QByteArray &bytes)
{
    m_counters.bytesOut += quint64(bytes.size());
    m_socket->write(bytes);
}

void AdminSession::closeWithNotice(const QByteArray &text)
{
    if (m_closing || m_finished)
        return;
    if (m_busy) {
        m_pendingNotice = text; // after the reply in progress, which may be about this close
        return;
    }
    m_closing = true;
    m_watchTimer.stop();
    write("Notice: " + text + '\n');
    m_socket->disconnectFromHost();
}

void AdminSession::finish()
{
    if (m_finished)
        return;
    m_finished = true;
    m_watchTimer.stop();
    qCInfo(lcAdmin, "admin connection %llu closed (%s)", m_identity.connectionId,
           qPrintable(m_identity.cn));
    Q_EMIT closed(this);
    deleteLater();
}

} // namespace cmq
