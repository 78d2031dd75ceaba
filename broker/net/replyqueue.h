#pragma once
// What a session owes its client, in order: a slot per request (filled when its handler
// answers, which for a publish is after the commit) with the deliveries pushed meanwhile queued
// behind them. Keeps count of the bytes it holds, so that they count toward the connection's
// output bound like the bytes already handed to the socket.

#include <deque>
#include <functional>

#include <QByteArray>

namespace cmq {

class ReplyQueue
{
public:
    struct Entry
    {
        bool ready = false;
        QByteArray lines;
        qint64 publishStartNs = -1; // set for publish and publish_batch
    };

    // A slot for the next request's reply; its id is passed to complete().
    quint64 reserve();
    // The reply of `slot`; null for a slot that is no longer queued (the queue was cleared).
    Entry *complete(quint64 slot, const QByteArray &lines);
    // Lines that are ready now (a delivery): sent once every reply before them is.
    void pushReady(const QByteArray &lines);
    // Hands the ready lines at the front to `write`, in order, up to the first reply not yet
    // complete.
    void takeReady(const std::function<void(const QByteArray &)> &write);
    void clear();

    Entry &back() { return m_entries.back(); }
    qsizetype size() const { return qsizetype(m_entries.size()); }
    bool empty() const { return m_entries.empty(); }
    // Bytes of lines held here (ready or partly filled) and not yet handed to the socket.
    qint64 heldBytes() const { return m_heldBytes; }

private:
    std::deque<Entry> m_entries; // the front has slot id m_firstSlot
    quint64 m_firstSlot = 0;
    qint64 m_heldBytes = 0;
};

} // namespace cmq
