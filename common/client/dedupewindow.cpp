#include "client/dedupewindow.h"

#include <algorithm>

namespace cmq::client {

DedupeWindow::DedupeWindow(int capacity) : m_capacity(std::max(1, capacity))
{
}

void DedupeWindow::add(const QString &messageId)
{
    if (m_ids.contains(messageId))
        return;
    m_ids.insert(messageId, 0);
    m_order.enqueue(messageId);
    while (m_order.size() > m_capacity)
        m_ids.remove(m_order.dequeue());
}

} // namespace cmq::client
