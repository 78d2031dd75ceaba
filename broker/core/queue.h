#pragma once
// One queue: ready messages in order, deliveries awaiting acknowledgement, and the consumers
// that share it round-robin. Pure state, no I/O: the router decides and records.

#include <algorithm>
#include <deque>

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QString>

#include "core/deadletter.h"
#include "core/message.h"
#include "core/queuecounters.h"

namespace cmq {

class Endpoint;
class Queue;

struct Consumer
{
    Endpoint *endpoint = nullptr;
    Queue *queue = nullptr;
    int prefetch = 0; // 0 = unlimited
    int unacked = 0;
    bool withMeta = false; // deliveries go out with their "Meta:" line
    bool hasRoom() const { return prefetch == 0 || unacked < prefetch; }
};

struct ReadyMessage
{
    MessagePtr message;
    bool redelivered = false;
    int deliveryCount = 0;      // deliveries from this queue so far, none acknowledged
    DeadLetterPtr deadLetter{}; // set when it came to this queue as a dead letter
};

struct Delivery
{
    MessagePtr message;
    Endpoint *endpoint = nullptr; // who must ack it
    Consumer *consumer = nullptr; // null for a fetch
    qint64 deliveredAtMs = 0;     // on the router's monotonic clock
    bool redelivered = false;
    quint64 seq = 0;       // delivery order, to requeue in the original order
    int deliveryCount = 0; // this one included
    DeadLetterPtr deadLetter{};
};

class Queue
{
public:
    Queue(QString name, QString owner, qint64 maxLength, qint64 maxBytes, QString overflow);

    const QString &name() const { return m_name; }
    const QString &owner() const { return m_owner; }
    qint64 maxLength() const { return m_maxLength; }
    qint64 maxBytes() const { return m_maxBytes; } // 0 = no byte limit
    const QString &overflow() const { return m_overflow; }
    bool rejectsWhenFull() const { return m_overflow == QLatin1String("reject-publish"); }
    void setPolicy(qint64 maxLength, const QString &overflow)
    {
        m_maxLength = maxLength;
        m_overflow = overflow;
    }
    // Messages expire this long after they were published; 0 = never (unless their own TTL).
    qint64 messageTtlMs() const { return m_messageTtlMs; }
    void setMessageTtlMs(qint64 ttlMs) { m_messageTtlMs = ttlMs; }
    const DeadLetterPolicy &deadLetterPolicy() const { return m_deadLetter; }
    void setDeadLetterPolicy(DeadLetterPolicy policy) { m_deadLetter = std::move(policy); }
    // When `message` expires in this queue, in ms since the epoch; 0 = never.
    qint64 expiresAtMs(const Message &message) const
    {
        const qint64 ttl = m_messageTtlMs > 0 && message.ttlMs > 0
                               ? std::min(m_messageTtlMs, message.ttlMs)
                               : std::max(m_messageTtlMs, message.ttlMs);
        return ttl > 0 ? message.sentTime.toMSecsSinceEpoch() + ttl : 0;
    }

    // The ready messages that stay in the database (docs/ARCHITECTURE.md, "Queue backlog"):
    // counted, not held. They always come after the ready messages held in memory, and are
    // paged in, in order, as those run low (core/queuepager.cpp).
    struct Backlog
    {
        qint64 messages = 0;
        qint64 bytes = 0;
        qint64 afterEntryId = 0;  // the next page starts after this entry...
        QByteArray fromMessageId; // ...or at this message's entry (the first not kept in memory)
        quint64 readTicket = 0;   // the page read in flight; 0 = none
        // After a restart, until the queue's entries counted in the background are in (or a
        // page finds the database empty behind the window): the database may hold more than
        // is known. `messages` and `bytes` then hold only what changed since start-up (minus
        // the head held then, plus publishes, minus pages), so they may be below zero.
        bool uncounted = false;
        qint64 entryBytesEstimate = 0; // while uncounted: the head's average envelope size
    };
    Backlog backlog;

    // Ready messages held in memory: the head of the queue.
    qsizetype windowCount() const { return qsizetype(m_ready.size()); }
    // What is known: while the backlog is uncounted, a lower bound.
    qsizetype readyCount() const
    {
        return windowCount() + qsizetype(std::max<qint64>(0, backlog.messages));
    }
    qsizetype unackedCount() const { return m_unacked.size(); }
    qsizetype depth() const { return readyCount() + unackedCount(); }
    // False for a while after a restart: depth, readyCount and bytes are then lower bounds.
    bool figuresExact() const { return !backlog.uncounted; }
    // Envelope bytes of the ready and unacknowledged messages; the router keeps it as messages
    // come and go (held, not summed when asked: the byte limit is checked on every publish).
    qint64 bytes() const { return m_bytes + std::max<qint64>(0, backlog.bytes); }
    // Of those, the bytes held in memory.
    qint64 heldBytes() const { return m_bytes; }
    void addBytes(qint64 delta) { m_bytes += delta; }

    // Publishes accepted but not yet committed, so reject-publish counts them too.
    qint64 inflight = 0;
    qint64 inflightBytes = 0;

    std::deque<ReadyMessage> &ready() { return m_ready; }
    QHash<QByteArray, Delivery> &unacked() { return m_unacked; }
    QList<Consumer *> &consumers() { return m_consumers; }

    // The next consumer (round-robin) with prefetch room and an output that is not backed up.
    Consumer *nextConsumer();

    // Counted here, read as they are by metrics and the admin view.
    QueueCounters counters;

private:
    QString m_name;
    QString m_owner;
    qint64 m_maxLength;
    qint64 m_maxBytes;
    QString m_overflow;
    qint64 m_messageTtlMs = 0;
    DeadLetterPolicy m_deadLetter;
    qint64 m_bytes = 0;
    std::deque<ReadyMessage> m_ready;
    QHash<QByteArray, Delivery> m_unacked;
    QList<Consumer *> m_consumers;
    qsizetype m_nextConsumer = 0;
};

} // namespace cmq
