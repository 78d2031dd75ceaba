#include "core/queue.h"

#include "core/endpoint.h"

namespace cmq {

Queue::Queue(QString name, QString owner, qint64 maxLength, qint64 maxBytes, QString overflow)
    : m_name(std::move(name)), m_owner(std::move(owner)), m_maxLength(maxLength),
      m_maxBytes(maxBytes), m_overflow(std::move(overflow))
{
}

Consumer *Queue::nextConsumer()
{
    const qsizetype count = m_consumers.size();
    for (qsizetype i = 0; i < count; ++i) {
        Consumer *candidate = m_consumers[(m_nextConsumer + i) % count];
        if (candidate->hasRoom() && candidate->endpoint->canTakeDeliveries()) {
            m_nextConsumer = (m_nextConsumer + i + 1) % count;
            return candidate;
        }
    }
    return nullptr;
}

} // namespace cmq
