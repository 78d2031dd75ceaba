#pragma once
// One client connection on the data listener: frames request lines, hands each to the
// dispatcher, and writes replies strictly in request order even when some complete later
// (a publish waits for its group commit). Also owns the connection's liveness rules:
// opt-in heartbeat pings, the idle timeout, and the shutdown notice.

#include <functional>

#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QPointer>

#include "core/endpoint.h"
#include "net/clientidentity.h"
#include "net/replyqueue.h"

namespace cmq {

class TlsStream;

class Dispatcher;
class LivenessClock;
class Session;

struct SessionLimits
{
    qint64 maxLineBytes = 1 << 20;
    int idleTimeoutSec = 60;
    int heartbeatTimeoutSec = 60;
    qint64 outputHighWaterBytes = 4 << 20; // above this a consumer gets no more deliveries
};

// The one-shot handle a handler completes with its reply lines. Safe to complete after the
// connection is gone (the lines are dropped).
class Reply
{
public:
    using Sink = std::function<void(const QByteArray &lines, quint64 messagesStored)>;

    Reply(Session *session, quint64 slot);
    // Completes into `sink` rather than a session's reply slot: for unit tests.
    explicit Reply(Sink sink);
    void send(const QByteArray &lines) const;
    // A publish's reply, with how many of its messages were stored (for the session's count).
    void sendPublished(const QByteArray &lines, quint64 messagesStored) const;

private:
    QPointer<Session> m_session;
    quint64 m_slot = 0;
    Sink m_sink;
};

struct SessionCounters
{
    quint64 requestsIn = 0;
    quint64 bytesIn = 0;
    quint64 bytesOut = 0;
    quint64 deliveriesOut = 0;
    quint64 messagesIn = 0; // published messages stored (answered "ACK <id>")
    quint64 slowEvents = 0; // times the unsent output went over outputHighWaterBytes
};

class Session final : public QObject, public Endpoint
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Session)

public:
    Session(TlsStream *socket, ClientIdentity identity, const SessionLimits &limits,
            Dispatcher &dispatcher, QObject *parent = nullptr);
    ~Session() override;

    const ClientIdentity &identity() const { return m_identity; }
    const SessionCounters &counters() const { return m_counters; }
    // A configuration reload changed what this CN may do.
    void setRoles(Roles roles) { m_identity.roles = roles; }
    // Output written but not yet taken by the kernel.
    qint64 unsentBytes() const;
    // Plus deliveries held behind a pending reply: all the output this connection holds.
    qint64 heldOutputBytes() const;
    // True from the moment unsent output passes the high-water mark until it drains to half.
    bool isBackedUp() const { return m_wasBackedUp; }
    // Called with the time from reading each publish/publish_batch line to its reply.
    void setPublishObserver(std::function<void(qint64 ns)> observer)
    {
        m_publishObserver = std::move(observer);
    }

    // Endpoint
    quint64 endpointId() const override { return m_identity.connectionId; }
    QString clientId() const override { return m_identity.cn; }
    void pushDelivery(const Message &message, const DeliveryFacts &facts) override;
    bool canTakeDeliveries() const override;
    void pushEvent(const QByteArray &line) override;

    // heartbeat <seconds>: from now on ping after that much silence from the client.
    void enableHeartbeat(int intervalSec);
    int heartbeatIntervalSec() const { return m_heartbeatSec; }

    // Graceful stop: say so, stop reading, finish the replies in flight, then close.
    void beginShutdown();
    // Sends one line and closes once it is written.
    void closeWithError(const QByteArray &line);

    void completeReply(quint64 slot, const QByteArray &lines, quint64 messagesStored = 0);

Q_SIGNALS:
    void writable(Session *session); // output drained below the low-water mark
    void closed(Session *session);   // the socket is gone; the session deletes itself next

private:
    friend class LivenessClock; // calls onLivenessTick() once a second

    void onReadyRead();
    void processBuffer();
    void handleLine(QByteArrayView line);
    quint64 reserveReply();
    void flushReplies();
    // Written at once, ahead of replies still waiting for their turn (between two lines: the
    // socket only ever gets whole replies).
    void writeNow(const QByteArray &line);
    // Output this connection holds: queued behind a pending reply, or in the socket unsent.
    void resumeReading();
    void onBytesWritten();
    void onLivenessTick();
    // The socket is gone. Input already received is still applied (see drainInput) before
    // the connection's state is released.
    void finish();
    // After the peer closed: runs the lines left in the buffer, the last one even without its
    // "\n", still waiting behind an ordering barrier but no longer for output room; replies
    // are dropped. Releases the session once nothing is left (or after a grace period).
    void drainInput();
    void release();

    TlsStream *m_socket;
    ClientIdentity m_identity;
    SessionLimits m_limits;
    Dispatcher &m_dispatcher;
    QByteArray m_buffer;
    qsizetype m_scanned = 0; // bytes at the front of m_buffer known to hold no "\n"

    ReplyQueue m_replies;

    QPointer<LivenessClock> m_livenessClock; // shared by all sessions; null once finished
    QElapsedTimer m_sinceClientTraffic;
    QElapsedTimer m_sinceServerTraffic;
    QElapsedTimer m_sincePing;
    int m_heartbeatSec = 0;
    bool m_readingPaused = false;
    bool m_shuttingDown = false;
    bool m_closing = false;
    bool m_finished = false;
    bool m_draining = false; // the peer has closed; applying what it sent before (drainInput)
    bool m_wasBackedUp = false;
    bool m_outputPaused = false; // not reading requests until the client reads our replies
    // A topology command (declare, bind, key registration) is in flight: later requests of this
    // connection wait for it, so a pipelined `bind` sees the queue its `declare_queue` created.
    bool m_barrierPending = false;
    quint64 m_barrierSlot = 0;
    SessionCounters m_counters;
    QElapsedTimer m_clock;
    std::function<void(qint64)> m_publishObserver;
};

} // namespace cmq
