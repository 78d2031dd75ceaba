#include "client/memoryoutbox.h"

namespace cmq::client {

Status MemoryOutbox::save(const OutboxEntry &entry)
{
    const auto previous = m_sequenceOf.constFind(entry.messageId);
    if (previous != m_sequenceOf.constEnd())
        m_bySequence.remove(*previous);
    m_bySequence.insert(entry.sequence, entry);
    m_sequenceOf.insert(entry.messageId, entry.sequence);
    return success();
}

Result<QList<OutboxEntry>> MemoryOutbox::readAll()
{
    return m_bySequence.values();
}

Status MemoryOutbox::remove(const QString &messageId)
{
    const auto it = m_sequenceOf.constFind(messageId);
    if (it != m_sequenceOf.constEnd()) {
        m_bySequence.remove(*it);
        m_sequenceOf.erase(it);
    }
    return success();
}

} // namespace cmq::client
