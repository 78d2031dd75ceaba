#include "core/livemessages.h"

#include "core/queue.h"
#include "limits/memorybudget.h"

namespace cmq {

const QString *LiveMessages::senderOf(const QByteArray &id) const
{
    const auto it = m_live.constFind(id);
    return it == m_live.cend() ? nullptr : &it->sender;
}

MessagePtr LiveMessages::shared(const QByteArray &id) const
{
    const auto it = m_live.constFind(id);
    return it == m_live.cend() ? nullptr : it->message.lock();
}

void LiveMessages::hold(Queue *queue, const MessagePtr &message)
{
    const qint64 bytes = message->envelope.size();
    queue->addBytes(bytes);
    LiveMessage &live = m_live[message->id];
    if (live.queueRefs++ == 0) {
        live.sender = message->sender;
        live.bytes = bytes;
        live.message = message;
        m_heldBytes += bytes;
        m_memory.addMessageBytes(bytes);
    }
}

void LiveMessages::release(const QByteArray &id)
{
    auto it = m_live.find(id);
    if (it != m_live.end() && --it->queueRefs <= 0) {
        m_memory.addMessageBytes(-it->bytes);
        m_heldBytes -= it->bytes;
        m_live.erase(it);
    }
}

} // namespace cmq
