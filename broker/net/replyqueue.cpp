#include "net/replyqueue.h"

namespace cmq {

quint64 ReplyQueue::reserve()
{
    m_entries.push_back(Entry{});
    return m_firstSlot + m_entries.size() - 1;
}

ReplyQueue::Entry *ReplyQueue::complete(quint64 slot, const QByteArray &lines)
{
    if (slot < m_firstSlot || slot >= m_firstSlot + m_entries.size())
        return nullptr;
    Entry &entry = m_entries[slot - m_firstSlot];
    entry.ready = true;
    entry.lines += lines;
    m_heldBytes += lines.size();
    return &entry;
}

void ReplyQueue::pushReady(const QByteArray &lines)
{
    m_entries.push_back(Entry{true, lines});
    m_heldBytes += lines.size();
}

void ReplyQueue::takeReady(const std::function<void(const QByteArray &)> &write)
{
    while (!m_entries.empty() && m_entries.front().ready) {
        const Entry entry = std::move(m_entries.front());
        m_entries.pop_front();
        ++m_firstSlot;
        m_heldBytes -= entry.lines.size();
        if (!entry.lines.isEmpty())
            write(entry.lines);
    }
}

void ReplyQueue::clear()
{
    m_firstSlot += m_entries.size();
    m_entries.clear();
    m_heldBytes = 0;
}

} // namespace cmq
