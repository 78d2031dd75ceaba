#pragma once
// Part of the delivery engine: a queue's backlog lives in the database; memory holds a bounded
// window of its head (performance.queue_window_messages / queue_window_bytes, all windows
// together at most performance.queue_window_budget_mb). A committed message joins the window
// while the queue has nothing in the database and the window has room; otherwise it is only
// counted. As consumers (or eviction, or expiry) drain the window below half, the next page is
// read from storage in the queue's order, and appended behind what is in memory.
// Ordering (docs/ARCHITECTURE.md, "Queue backlog"): the storage worker runs jobs in order and
// hands results back in order, so when a page arrives every commit it contains has already been
// counted into the backlog here; a message is never both in the window and read by a page.

#include <functional>

#include "config/config.h"
#include "core/deadletter.h"
#include "core/message.h"

namespace cmq {

class LiveMessages;
class Queue;
class Topology;
namespace storage {
class RouterStore;
struct QueueBacklog;
struct QueueEntry;
} // namespace storage

// The dead-letter record a page's entry carries (null: not a dead letter).
DeadLetterPtr deadLetterRecord(const storage::QueueEntry &entry);

class QueuePager
{
    Q_DISABLE_COPY_MOVE(QueuePager)

public:
    QueuePager(Topology &topology, LiveMessages &live, storage::RouterStore &store,
               const Config::Performance &performance);

    // Whether a committed message of `bytes` joins the queue's window (else: its backlog).
    bool admitToWindow(const Queue *queue, qint64 bytes) const;
    void addToBacklog(Queue *queue, const Message &message);
    // `messages` new entries (of `bytes`) behind everything the queue holds, the first of them
    // `firstMessageId`'s (a requeue of a dead-letter queue's backlog).
    void addToBacklog(Queue *queue, qint64 messages, qint64 bytes,
                      const QByteArray &firstMessageId);
    // Entries of the backlog are about to leave it in the database (a requeue): a page being
    // read may hold them and is dropped (the next one starts where that one would have), and
    // none is read, nor does a publish join the window, until endBacklogMove() with the ticket.
    quint64 beginBacklogMove(Queue *queue);
    // `messages` entries (of `bytes`) have left the backlog (none if the move failed).
    void endBacklogMove(Queue *queue, quint64 ticket, qint64 messages, qint64 bytes);
    // Start-up: the queue holds `backlog` in all, of which the head up to `lastEntryId` is in
    // memory already (`heldMessages` of `heldBytes`).
    void restoreBacklog(Queue *queue, const storage::QueueBacklog &backlog, qint64 lastEntryId,
                        qint64 heldMessages, qint64 heldBytes);
    // Start-up, for a queue whose head filled the window: how much is behind it is counted in
    // the background (storage::RouterStore::countQueueBacklogs); until then the backlog is
    // uncounted (Queue::Backlog), so nothing joins the window ahead of it, and pages are read
    // as usual. The head up to `lastEntryId` is in memory (`heldMessages` of `heldBytes`).
    void awaitCount(Queue *queue, qint64 lastEntryId, qint64 heldMessages, qint64 heldBytes);
    // The count came: `counted` entries of the queue were in the database at start-up. False
    // when the queue no longer waited for it (purged, deleted, or recreated meanwhile).
    bool settleCount(Queue *queue, qint64 counted);
    // Reads the next page if the window runs low and the database holds (or may hold) more.
    void refill(Queue *queue);
    // Purge or delete: the database no longer holds the backlog; a page in flight is dropped.
    void forget(Queue *queue);

    // One message object per id, shared by every queue that holds it.
    MessagePtr messageFor(const storage::QueueEntry &entry) const;

    // Called after a page joined `queue`'s window or its backlog was counted (the delivery
    // engine evicts down to the limits and dispatches).
    std::function<void(Queue *)> onPageArrived;

    quint64 pagesRead() const { return m_pagesRead; }

private:
    int pageLimit(const Queue *queue) const;

    Topology &m_topology;
    LiveMessages &m_live;
    storage::RouterStore &m_store;
    const qsizetype m_windowMessages;
    const qint64 m_windowBytes;
    const qint64 m_budgetBytes;
    quint64 m_nextTicket = 0;
    quint64 m_pagesRead = 0;
};

} // namespace cmq
