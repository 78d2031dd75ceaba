#include "net/session.h"

#include <QTimer>

#include "core/message.h"
#include "handlers/dispatcher.h"
#include "net/livenessclock.h"
#include "net/netlog.h"
#include "net/requestframer.h"
#include "net/tlsstream.h"
#include "protocol/replies.h"
#include "protocol/request.h"

namespace cmq {

namespace reply = protocol::reply;

// A client may pipeline this many requests whose replies are still pending before the session
// stops reading (TCP back-pressure does the rest). Generous: a publisher window of 256 with
// batches fits many times over.
constexpr qsizetype kMaxPendingReplies = 8192;
// Read in chunks so one connection cannot monopolise the event loop.
constexpr qint64 kReadChunk = 256 * 1024;
// How long the input of a closed connection may wait for an ordering barrier (a commit) before
// the rest of it is given up.
constexpr int kDrainGraceMs = 10000;

// Commands whose effect later requests may depend on. They complete only once storage has
// committed them, so the session reads nothing further from the connection until they have.
static bool isOrderingBarrier(protocol::Command command)
{
    switch (command) {
    case protocol::Command::DeclareQueue:
    case protocol::Command::DeclareExchange:
    case protocol::Command::Bind:
    case protocol::Command::QueuePolicy:
    case protocol::Command::RegisterPublicKey:
        return true;
    default:
        return false;
    }
}

Reply::Reply(Session *session, quint64 slot) : m_session(session), m_slot(slot)
{
}

Reply::Reply(Sink sink) : m_sink(std::move(sink))
{
}

void Reply::send(const QByteArray &lines) const
{
    sendPublished(lines, 0);
}

void Reply::sendPublished(const QByteArray &lines, quint64 messagesStored) const
{
    if (m_sink)
        m_sink(lines, messagesStored);
    else if (m_session)
        m_session->completeReply(m_slot, lines, messagesStored);
}

Session::Session(TlsStream *socket, ClientIdentity identity, const SessionLimits &limits,
                 Dispatcher &dispatcher, QObject *parent)
    : QObject(parent), m_socket(socket), m_identity(std::move(identity)), m_limits(limits),
      m_dispatcher(dispatcher)
{
    m_socket->setParent(this);
    // Bound what the stream buffers for us: beyond this, the kernel's TCP window pushes back.
    m_socket->setReadBufferSize(qMax<qint64>(limits.maxLineBytes + 2, kReadChunk) * 2);
    connect(m_socket, &TlsStream::readyRead, this, &Session::onReadyRead);
    connect(m_socket, &TlsStream::bytesWritten, this, &Session::onBytesWritten);
    connect(m_socket, &TlsStream::disconnected, this, &Session::finish);

    m_sinceClientTraffic.start();
    m_sinceServerTraffic.start();
    m_sincePing.start();
    m_clock.start();
    m_livenessClock = &LivenessClock::forCurrentThread();
    m_livenessClock->add(this);

    // Data may have arrived together with the end of the handshake.
    QMetaObject::invokeMethod(this, &Session::onReadyRead, Qt::QueuedConnection);
}

Session::~Session()
{
    if (m_livenessClock)
        m_livenessClock->remove(this);
}

void Session::onReadyRead()
{
    if (m_closing || m_finished)
        return;
    while (!m_readingPaused && !m_outputPaused && !m_barrierPending &&
           m_socket->bytesAvailable() > 0) {
        const QByteArray chunk = m_socket->read(kReadChunk);
        if (chunk.isEmpty())
            break;
        m_counters.bytesIn += quint64(chunk.size());
        m_sinceClientTraffic.restart();
        m_buffer.append(chunk);
        processBuffer();
        if (m_closing)
            return;
    }
}

void Session::processBuffer()
{
    qsizetype offset = 0;
    while (!m_closing && !m_shuttingDown && !m_barrierPending) {
        // Once the peer is gone its replies are dropped, so there is no output to wait for.
        if (!m_draining && qsizetype(m_replies.size()) >= kMaxPendingReplies) {
            m_readingPaused = true;
            break;
        }
        // A client that sends requests but does not read the replies would grow our output
        // without bound; stop reading it until it catches up (TCP pushes back on it).
        if (!m_draining && heldOutputBytes() >= m_limits.outputHighWaterBytes) {
            m_outputPaused = true;
            break;
        }
        const QByteArrayView rest = QByteArrayView(m_buffer).sliced(offset);
        const RequestFrame frame = nextRequestFrame(rest, m_limits.maxLineBytes, m_scanned);
        if (frame.kind == RequestFrame::Kind::NeedMore) {
            m_scanned = frame.scanned;
            break;
        }
        if (frame.kind == RequestFrame::Kind::TooLong) {
            qCWarning(lcSession, "%s: request line over %lld bytes, closing",
                      qPrintable(m_identity.cn), qlonglong(m_limits.maxLineBytes));
            m_buffer.clear();
            m_scanned = 0;
            closeWithError(frame.replyLine);
            return;
        }
        offset += frame.consumed;
        m_scanned = 0;
        if (frame.kind == RequestFrame::Kind::Refused) {
            const quint64 slot = reserveReply();
            m_dispatcher.refuseMalformed(*this, frame.replyLine, Reply(this, slot));
            continue;
        }
        if (frame.kind == RequestFrame::Kind::Request)
            handleLine(frame.line); // blank lines are keep-alives, not commands
    }
    m_buffer.remove(0, offset);
    if (m_buffer.isEmpty())
        m_buffer = QByteArray(); // an idle connection keeps no input buffer
}

void Session::handleLine(QByteArrayView line)
{
    ++m_counters.requestsIn;
    protocol::ParseResult parsed = protocol::parseRequest(line);
    Dispatcher::checkParsed(parsed);
    const quint64 slot = reserveReply();
    if (m_draining && (parsed.request.command == protocol::Command::Consume ||
                       parsed.request.command == protocol::Command::Fetch)) {
        // Their only effect would be deliveries to a connection that is gone.
        completeReply(slot, {});
        return;
    }
    if (parsed.status != protocol::ParseStatus::Ok) {
        m_dispatcher.refuseMalformed(*this, parsed.errorReply + '\n', Reply(this, slot));
        return;
    }
    if (parsed.request.command == protocol::Command::Publish ||
        parsed.request.command == protocol::Command::PublishBatch)
        m_replies.back().publishStartNs = m_clock.nsecsElapsed();
    if (isOrderingBarrier(parsed.request.command)) {
        m_barrierPending = true;
        m_barrierSlot = slot;
    }
    m_dispatcher.dispatch(*this, parsed.request, Reply(this, slot));
}

quint64 Session::reserveReply()
{
    return m_replies.reserve();
}

void Session::completeReply(quint64 slot, const QByteArray &lines, quint64 messagesStored)
{
    ReplyQueue::Entry *completed = m_replies.complete(slot, lines);
    if (!completed)
        return;
    const ReplyQueue::Entry &pending = *completed;
    if (m_barrierPending && slot == m_barrierSlot) {
        m_barrierPending = false;
        resumeReading();
    }
    if (pending.publishStartNs >= 0) {
        m_counters.messagesIn += messagesStored;
        if (m_publishObserver)
            m_publishObserver(m_clock.nsecsElapsed() - pending.publishStartNs);
    }
    flushReplies();
}

void Session::pushDelivery(const Message &message, const DeliveryFacts &facts)
{
    ++m_counters.deliveriesOut;
    m_replies.pushReady(deliveryLines(message, facts));
    flushReplies();
}

void Session::pushEvent(const QByteArray &line)
{
    m_replies.pushReady(line);
    flushReplies();
}

void Session::flushReplies()
{
    if (m_finished)
        return;
    m_replies.takeReady([this](const QByteArray &lines) { writeNow(lines); });
    if (m_readingPaused && !m_shuttingDown &&
        qsizetype(m_replies.size()) < kMaxPendingReplies / 2) {
        m_readingPaused = false;
        resumeReading();
    }
    if (m_shuttingDown && m_replies.empty())
        m_socket->disconnectFromHost();
    if (!m_wasBackedUp && heldOutputBytes() >= m_limits.outputHighWaterBytes) {
        ++m_counters.slowEvents;
        qCDebug(lcSession, "%s: %lld bytes unsent, deliveries paused (slow consumer)",
                qPrintable(m_identity.cn), qlonglong(heldOutputBytes()));
    }
    if (!canTakeDeliveries())
        m_wasBackedUp = true;
}

// Later, not now: the caller may be deep inside a handler or a storage callback.
void Session::resumeReading()
{
    QMetaObject::invokeMethod(
        this,
        [this] {
            if (m_closing || m_finished)
                return;
            if (m_draining)
                return drainInput();
            processBuffer();
            onReadyRead();
        },
        Qt::QueuedConnection);
}

void Session::writeNow(const QByteArray &line)
{
    if (m_draining)
        return; // nobody to read it
    m_counters.bytesOut += quint64(line.size());
    m_sinceServerTraffic.restart();
    m_socket->write(line);
}

qint64 Session::heldOutputBytes() const
{
    return unsentBytes() + m_replies.heldBytes();
}

qint64 Session::unsentBytes() const
{
    return m_socket->bytesToWrite();
}

bool Session::canTakeDeliveries() const
{
    // Deliveries queued behind a pending reply count too: a consumer that never reads, with a
    // slow request in front of them, must not make us copy a whole queue into memory.
    return !m_closing && !m_shuttingDown && !m_draining &&
           heldOutputBytes() < m_limits.outputHighWaterBytes;
}

void Session::onBytesWritten()
{
    const bool drained = heldOutputBytes() < m_limits.outputHighWaterBytes / 2;
    if (m_outputPaused && drained && !m_closing && !m_finished) {
        m_outputPaused = false;
        resumeReading();
    }
    if (m_wasBackedUp && drained) {
        m_wasBackedUp = false;
        Q_EMIT writable(this);
    }
}

void Session::enableHeartbeat(int intervalSec)
{
    m_heartbeatSec = intervalSec;
    m_sincePing.restart();
}

void Session::onLivenessTick()
{
    const qint64 silentMs = m_sinceClientTraffic.elapsed();
    if (m_heartbeatSec > 0) {
        // Opt-in heartbeat (Mail Pigeon's asymmetric model): the broker pings a silent client,
        // and gives up on one that stays silent; the client watches for the pings.
        const qint64 deadlineMs =
            qMax<qint64>(qint64(m_limits.heartbeatTimeoutSec), 2LL * m_heartbeatSec) * 1000;
        if (silentMs >= deadlineMs) {
            qCInfo(lcSession, "%s: no traffic for %lld ms after pings, closing",
                   qPrintable(m_identity.cn), qlonglong(silentMs));
            closeWithError(reply::error("Heartbeat timeout: closing the connection"));
            return;
        }
        // Also when we have sent nothing for that long (a busy client whose replies wait for a
        // slow commit): the client's watchdog needs to hear from us. The ping goes out at once,
        // ahead of replies still waiting; it is no reply, so their order is kept.
        const qint64 intervalMs = qint64(m_heartbeatSec) * 1000;
        if ((silentMs >= intervalMs || m_sinceServerTraffic.elapsed() >= intervalMs) &&
            m_sincePing.elapsed() >= intervalMs) {
            m_sincePing.restart();
            writeNow(reply::ping());
        }
        return;
    }
    // Without heartbeats, an idle connection is closed unless it is waiting for deliveries.
    if (m_limits.idleTimeoutSec > 0 && silentMs >= qint64(m_limits.idleTimeoutSec) * 1000 &&
        !m_dispatcher.isConsuming(*this) && m_replies.empty()) {
        qCInfo(lcSession, "%s: idle for %d s, closing", qPrintable(m_identity.cn),
               m_limits.idleTimeoutSec);
        closeWithError(reply::error(QByteArray("Idle timeout: no traffic for ") +
                                    QByteArray::number(m_limits.idleTimeoutSec) +
                                    " s; closing the connection"));
    }
}

void Session::beginShutdown()
{
    if (m_shuttingDown || m_closing || m_finished)
        return;
    m_shuttingDown = true;
    m_readingPaused = true;
    // The notice goes out at once, ahead of replies still in flight, so clients can fail
    // over immediately; those replies follow as their commits finish.
    writeNow(reply::shutdownNotice());
    flushReplies();
}

void Session::closeWithError(const QByteArray &line)
{
    if (m_closing || m_finished)
        return;
    m_closing = true;
    m_readingPaused = true;
    m_replies.clear();
    m_socket->write(line);
    m_socket->disconnectFromHost(); // flushes what was written first
}

void Session::finish()
{
    if (m_finished || m_draining)
        return;
    if (m_livenessClock) {
        m_livenessClock->remove(this);
        m_livenessClock = nullptr;
    }
    if (m_closing || m_shuttingDown)
        return release(); // we stopped reading it on purpose
    // Acks, nacks and publishes that arrived with the close take effect before the router
    // gets this connection's unacked deliveries back: replies may be lost, effects may not.
    m_draining = true;
    const QByteArray rest = m_socket->readAll();
    m_counters.bytesIn += quint64(rest.size());
    m_buffer.append(rest);
    if (!m_buffer.isEmpty() && !m_buffer.endsWith('\n'))
        m_buffer.append('\n'); // the peer will not finish its last line now
    QTimer::singleShot(kDrainGraceMs, this, [this] {
        if (!m_finished) {
            qCWarning(lcSession, "%s: input after the close still waiting after %d ms; dropped",
                      qPrintable(m_identity.cn), kDrainGraceMs);
            release();
        }
    });
    drainInput();
}

void Session::drainInput()
{
    processBuffer();
    if (!m_barrierPending && !m_finished)
        release();
}

void Session::release()
{
    if (m_finished)
        return;
    m_finished = true;
    Q_EMIT closed(this);
    deleteLater();
}

} // namespace cmq
