#include "client/brokerconnection.h"

#include "client/clientlog.h"
#include "protocol/lineframer.h"
#include "protocol/replyreader.h"

namespace cmq::client {

namespace {

using ReplyKind = protocol::ReplyLine::Kind;

bool isUnauthorized(const QByteArray &line)
{
    return protocol::readReply(line).isError("Unauthorized");
}

// Deliveries carry whole envelopes; the broker's own request limit is 1 MiB by default, so this
// only stops a peer that streams without line breaks.
constexpr qsizetype MaxReplyLine = 64 * 1024 * 1024;
// The broker checks liveness once a second, so a ping may come up to a second late.
constexpr int DeadMarginMs = 2000;
constexpr int WatchdogIntervalMs = 250;

} // namespace

BrokerConnection::BrokerConnection(const BrokerAddress &address, const QSslConfiguration &tls,
                                   int heartbeatSec, int connectTimeoutMs, QObject *parent)
    : QObject(parent), m_address(address), m_heartbeatSec(qBound(1, heartbeatSec, 3600)),
      m_connectTimeoutMs(qMax(1, connectTimeoutMs))
{
    m_socket.setSslConfiguration(tls);
    m_deadline.setSingleShot(true);
    m_watchdog.setInterval(WatchdogIntervalMs);
    // Requests are small lines that must leave at once (no Nagle delay). Options take effect
    // only on a connected socket, hence here rather than before connecting.
    connect(&m_socket, &QSslSocket::connected, this,
            [this] { m_socket.setSocketOption(QAbstractSocket::LowDelayOption, 1); });
    connect(&m_socket, &QSslSocket::encrypted, this, &BrokerConnection::onEncrypted);
    connect(&m_socket, &QSslSocket::readyRead, this, &BrokerConnection::onReadyRead);
    connect(&m_socket, &QSslSocket::errorOccurred, this, &BrokerConnection::onSocketError);
    connect(&m_socket, &QSslSocket::disconnected, this, [this] {
        finish(m_lastUnsolicitedError.isEmpty() ? QStringLiteral("the broker closed the connection")
                                                : QString::fromUtf8(m_lastUnsolicitedError),
               isUnauthorized(m_lastUnsolicitedError));
    });
    connect(&m_socket, &QSslSocket::sslErrors, this, [this](const QList<QSslError> &errors) {
        if (!errors.isEmpty())
            m_lastUnsolicitedError = "TLS: " + errors.first().errorString().toUtf8();
    });
    connect(&m_deadline, &QTimer::timeout, this, [this] {
        if (m_draining)
            finish(QStringLiteral("the broker is shutting down"), false);
        else
            finish(QStringLiteral("timed out after %1 ms connecting to %2")
                       .arg(m_connectTimeoutMs)
                       .arg(m_address.toString()),
                   false);
    });
    connect(&m_watchdog, &QTimer::timeout, this, &BrokerConnection::onWatchdog);
}

BrokerConnection::~BrokerConnection()
{
    // No signal of the dying socket may reach a half-destroyed connection.
    m_socket.disconnect(this);
    m_socket.abort();
}

void BrokerConnection::open()
{
    if (m_state != State::Idle)
        return;
    m_state = State::Connecting;
    m_deadline.start(m_connectTimeoutMs);
    m_socket.connectToHostEncrypted(m_address.host, m_address.port);
}

void BrokerConnection::onEncrypted()
{
    // Heartbeats double as the proof that the broker accepted us.
    const QByteArray seconds = QByteArray::number(m_heartbeatSec);
    request("heartbeat " + seconds, [this, seconds](const Result<QByteArray> &reply) {
        if (!reply)
            return;
        const protocol::ReplyLine line = protocol::readReply(reply.value());
        // A broker without the extension (the original one) still accepted us; we
        // just cannot watch it, and rely on TCP to notice its death.
        const bool withoutHeartbeats = line.kind == ReplyKind::UnknownCommand;
        const bool accepted = line.kind == ReplyKind::Heartbeat && line.text == seconds;
        if (!accepted && !withoutHeartbeats) {
            finish(QString::fromUtf8(reply.value()), line.isError("Unauthorized"));
            return;
        }
        m_state = State::Ready;
        m_deadline.stop();
        m_sinceHeard.start();
        if (!withoutHeartbeats)
            m_watchdog.start();
        Q_EMIT ready();
    });
}

void BrokerConnection::request(const QByteArray &line, ReplyHandler handler)
{
    if (!isOpen() || m_draining) {
        if (handler)
            handler(Result<QByteArray>::failure(QStringLiteral("not connected")));
        return;
    }
    m_pending.enqueue(std::move(handler));
    m_socket.write(line + '\n');
}

void BrokerConnection::abort(const QString &reason)
{
    finish(reason, false);
}

void BrokerConnection::drain(int ms)
{
    if (!isOpen())
        return;
    m_draining = true;
    if (m_pending.isEmpty()) {
        finish(QStringLiteral("the broker is shutting down"), false);
        return;
    }
    m_deadline.start(ms);
}

void BrokerConnection::onReadyRead()
{
    m_buffer += m_socket.readAll();
    qsizetype offset = 0;
    while (m_state != State::Closed) {
        const protocol::Frame frame =
            protocol::takeLine(QByteArrayView(m_buffer).sliced(offset), MaxReplyLine, m_scanned);
        if (frame.status == protocol::FrameStatus::Incomplete) {
            m_scanned = frame.scanned; // a long delivery is searched for "\n" only once
            break;
        }
        if (frame.status == protocol::FrameStatus::TooLong) {
            finish(QStringLiteral("the broker sent a line longer than %1 bytes").arg(MaxReplyLine),
                   false);
            return;
        }
        const QByteArray line = frame.line.toByteArray();
        offset += frame.consumed;
        m_scanned = 0;
        if (frame.status == protocol::FrameStatus::Ok)
            handleLine(line);
    }
    if (m_state != State::Closed)
        m_buffer.remove(0, offset);
}

void BrokerConnection::handleLine(const QByteArray &line)
{
    m_sinceHeard.restart();
    const protocol::ReplyLine read = protocol::readReply(line);
    if (read.kind == ReplyKind::Ping) {
        m_socket.write("pong\n"); // no reply comes for it
        return;
    }
    if (read.kind == ReplyKind::ShutdownNotice) {
        Q_EMIT shutdownNotice();
        return;
    }
    if (read.kind == ReplyKind::Message || read.kind == ReplyKind::Redelivered ||
        read.kind == ReplyKind::Meta || read.kind == ReplyKind::Presence) {
        Q_EMIT pushed(line);
        return;
    }
    if (m_pending.isEmpty()) {
        // Lines nobody asked for: the broker's reason for closing on us, usually.
        qCWarning(lcClient, "%s: unsolicited line: %s", qPrintable(m_address.toString()),
                  line.left(200).constData());
        if (read.isError())
            m_lastUnsolicitedError = line;
        return;
    }
    const ReplyHandler handler = m_pending.dequeue();
    if (handler)
        handler(line);
    if (m_state == State::Closed || !m_pending.isEmpty())
        return;
    if (m_draining)
        finish(QStringLiteral("the broker is shutting down"), false);
    else
        Q_EMIT idle();
}

void BrokerConnection::onSocketError(QAbstractSocket::SocketError error)
{
    QString reason = m_socket.errorString();
    if (!m_lastUnsolicitedError.isEmpty())
        reason = QString::fromUtf8(m_lastUnsolicitedError);
    const bool refused =
        error == QAbstractSocket::SslHandshakeFailedError || isUnauthorized(m_lastUnsolicitedError);
    finish(reason, refused);
}

void BrokerConnection::onWatchdog()
{
    const qint64 limitMs = 2LL * m_heartbeatSec * 1000 + DeadMarginMs;
    if (m_sinceHeard.elapsed() > limitMs)
        finish(QStringLiteral("nothing heard from the broker for %1 ms: considered dead")
                   .arg(m_sinceHeard.elapsed()),
               false);
}

void BrokerConnection::finish(const QString &why, bool refused)
{
    if (m_state == State::Closed)
        return;
    // Every reason names the broker, so a log line or an error message stands on its own.
    const QString reason = m_address.toString() + QStringLiteral(": ") + why;
    m_state = State::Closed;
    m_deadline.stop();
    m_watchdog.stop();
    m_socket.disconnect(this);
    m_socket.abort();
    m_buffer.clear();
    m_scanned = 0;
    // Whoever waits for a reply learns that none will come, in request order.
    QQueue<ReplyHandler> pending;
    pending.swap(m_pending);
    const auto lostReply =
        Result<QByteArray>::failure(QStringLiteral("connection lost: ") + reason);
    for (const ReplyHandler &handler : std::as_const(pending)) {
        if (handler)
            handler(lostReply);
    }
    Q_EMIT lost(reason, refused);
}

} // namespace cmq::client
