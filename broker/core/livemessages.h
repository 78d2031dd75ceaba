#pragma once
// The messages still in some queue (ready or awaiting an ack), one entry per id however many
// queues hold it: what dedupe and resend look up, and what the memory budget is told about.

#include <QByteArray>
#include <QHash>
#include <QString>

#include "core/message.h"

namespace cmq {

class Queue;
namespace limits {
class MemoryBudget;
}

class LiveMessages
{
    Q_DISABLE_COPY_MOVE(LiveMessages)

public:
    explicit LiveMessages(limits::MemoryBudget &memory) : m_memory(memory) {}

    bool contains(const QByteArray &id) const { return m_live.contains(id); }
    // How many queues hold it (0: none).
    int queueCount(const QByteArray &id) const { return m_live.value(id).queueRefs; }
    // The publisher's CN, or null when the message is in no queue.
    const QString *senderOf(const QByteArray &id) const;

    // The message object already held for `id` by some queue, to share rather than hold a second
    // copy of a message paged in for another queue (fanout); null when none holds it.
    MessagePtr shared(const QByteArray &id) const;
    // Envelope bytes held, each message once.
    qint64 heldBytes() const { return m_heldBytes; }

    // `queue` holds `message` from now on: counted into the queue's bytes and, the first time
    // any queue holds it, into the memory budget.
    void hold(Queue *queue, const MessagePtr &message);
    // One queue let go of it (its bytes are the caller's to uncount); the last one frees it.
    void release(const QByteArray &id);

private:
    struct LiveMessage
    {
        QString sender;
        int queueRefs = 0;
        qint64 bytes = 0; // counted once in the memory budget, however many queues hold it
        std::weak_ptr<const Message> message;
    };

    limits::MemoryBudget &m_memory;
    QHash<QByteArray, LiveMessage> m_live;
    qint64 m_heldBytes = 0;
};

} // namespace cmq
