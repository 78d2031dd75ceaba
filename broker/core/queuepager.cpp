#include "core/queuepager.h"

#include <QTimer>

#include "core/corelog.h"
#include "core/livemessages.h"
#include "core/queue.h"
#include "core/topology.h"
#include "protocol/envelope.h"
#include "storage/storage.h"

namespace cmq {

namespace {
// A failed page read (storage unavailable) is tried again this much later.
constexpr int PageRetryMs = 1000;
} // namespace

QueuePager::QueuePager(Topology &topology, LiveMessages &live, storage::RouterStore &store,
                       const Config::Performance &performance)
    : m_topology(topology), m_live(live), m_store(store),
      m_windowMessages(qMax(2, performance.queueWindowMessages)),
      m_windowBytes(qMax<qint64>(1, performance.queueWindowBytes)),
      m_budgetBytes(qint64(qMax(1, performance.queueWindowBudgetMb)) << 20)
{
}

bool QueuePager::admitToWindow(const Queue *queue, qint64 bytes) const
{
    // Behind a backlog (or a page being read, or a backlog not counted yet) a message would
    // overtake older ones.
    if (queue->backlog.messages > 0 || queue->backlog.readTicket != 0 || queue->backlog.uncounted)
        return false;
    return queue->windowCount() < m_windowMessages && queue->heldBytes() + bytes <= m_windowBytes &&
           m_live.heldBytes() + bytes <= m_budgetBytes;
}

void QueuePager::addToBacklog(Queue *queue, const Message &message)
{
    addToBacklog(queue, 1, message.envelope.size(), message.id);
}

void QueuePager::addToBacklog(Queue *queue, qint64 messages, qint64 bytes,
                              const QByteArray &firstMessageId)
{
    Queue::Backlog &backlog = queue->backlog;
    // The backlog starts here: everything committed before this message is in memory (or
    // gone), and the entry ids of what joined the window on publish are not known here, so
    // the next page starts at this message's own entry.
    if (backlog.messages == 0 && backlog.readTicket == 0 && !backlog.uncounted)
        backlog.fromMessageId = firstMessageId;
    backlog.messages += messages;
    backlog.bytes += bytes;
    refill(queue);
}

quint64 QueuePager::beginBacklogMove(Queue *queue)
{
    // A page in flight has the old ticket: its result is stale now, and where it started is
    // still where the next one starts.
    const quint64 ticket = ++m_nextTicket;
    queue->backlog.readTicket = ticket;
    return ticket;
}

void QueuePager::endBacklogMove(Queue *queue, quint64 ticket, qint64 messages, qint64 bytes)
{
    Queue::Backlog &backlog = queue->backlog;
    if (backlog.readTicket != ticket)
        return; // purged or deleted meanwhile: nothing is counted any more
    backlog.readTicket = 0;
    if (backlog.uncounted) {
        // The moved entries were counted at start-up or since; the count adds the former.
        backlog.messages -= messages;
        backlog.bytes -= bytes;
    } else {
        backlog.messages = qMax<qint64>(0, backlog.messages - messages);
        backlog.bytes = backlog.messages > 0 ? qMax<qint64>(0, backlog.bytes - bytes) : 0;
    }
    refill(queue);
}

void QueuePager::restoreBacklog(Queue *queue, const storage::QueueBacklog &stored,
                                qint64 lastEntryId, qint64 heldMessages, qint64 heldBytes)
{
    Queue::Backlog &backlog = queue->backlog;
    backlog.messages = qMax<qint64>(0, stored.messages - heldMessages);
    backlog.bytes = backlog.messages > 0 ? qMax<qint64>(0, stored.bytes - heldBytes) : 0;
    backlog.afterEntryId = lastEntryId;
    backlog.fromMessageId.clear();
}

void QueuePager::awaitCount(Queue *queue, qint64 lastEntryId, qint64 heldMessages, qint64 heldBytes)
{
    Queue::Backlog &backlog = queue->backlog;
    backlog = Queue::Backlog{};
    backlog.uncounted = true;
    backlog.entryBytesEstimate = heldBytes / qMax<qint64>(1, heldMessages);
    // The count will include the head held now: it is subtracted up front, so that adding the
    // count leaves what is behind the window.
    backlog.messages = -heldMessages;
    backlog.bytes = -heldMessages * backlog.entryBytesEstimate;
    backlog.afterEntryId = lastEntryId;
}

bool QueuePager::settleCount(Queue *queue, qint64 counted)
{
    Queue::Backlog &backlog = queue->backlog;
    if (!backlog.uncounted)
        return false; // purged, deleted or paged to its end meanwhile: exact already
    backlog.uncounted = false;
    backlog.messages += counted;
    // Bytes stay an estimate for the part counted at start-up (docs/STORAGE.md); pages
    // subtract what they really hold.
    backlog.bytes += counted * backlog.entryBytesEstimate;
    backlog.entryBytesEstimate = 0;
    if (backlog.messages < 0) {
        qCWarning(lcRouter,
                  "queue %s: its count (%lld) is below what it has handed out since start-up; "
                  "its backlog is taken as empty",
                  qPrintable(queue->name()), qlonglong(counted));
        backlog.messages = 0;
    }
    if (backlog.messages == 0 || backlog.bytes < 0)
        backlog.bytes = 0;
    refill(queue);
    if (onPageArrived)
        onPageArrived(queue); // limits apply to the whole queue now
    return true;
}

void QueuePager::forget(Queue *queue)
{
    queue->backlog = Queue::Backlog{};
}

DeadLetterPtr deadLetterRecord(const storage::QueueEntry &entry)
{
    const auto reason = deadLetterReasonFromName(entry.deadLetterReason);
    if (!reason)
        return nullptr;
    return std::make_shared<const DeadLetterRecord>(
        DeadLetterRecord{*reason, entry.deadLetterOriginalQueue, entry.deadLetteredAt,
                         int(entry.deadLetterDeliveryCount)});
}

MessagePtr QueuePager::messageFor(const storage::QueueEntry &entry) const
{
    if (MessagePtr held = m_live.shared(entry.messageId))
        return held;
    // The envelope was checked when it was published; only its TTL is wanted here.
    const auto envelope = protocol::inspectEnvelope(entry.envelope);
    return std::make_shared<const Message>(Message{entry.messageId, entry.sender, entry.exchange,
                                                   entry.routingKey, entry.envelope, entry.sentTime,
                                                   envelope ? envelope->ttlMs : 0});
}

int QueuePager::pageLimit(const Queue *queue) const
{
    const Queue::Backlog &backlog = queue->backlog;
    const qint64 average =
        qMax<qint64>(1, backlog.uncounted ? backlog.entryBytesEstimate
                                          : backlog.bytes / qMax<qint64>(1, backlog.messages));
    qint64 rows = m_windowMessages - queue->windowCount();
    rows = qMin(rows, (m_windowBytes - queue->heldBytes()) / average);
    rows = qMin(rows, (m_budgetBytes - m_live.heldBytes()) / average);
    if (!backlog.uncounted)
        rows = qMin(rows, backlog.messages);
    // An empty window always gets something, budget or not: the queue must move.
    return int(qBound<qint64>(1, rows, m_windowMessages));
}

void QueuePager::refill(Queue *queue)
{
    Queue::Backlog &backlog = queue->backlog;
    if ((backlog.messages <= 0 && !backlog.uncounted) || backlog.readTicket != 0)
        return;
    // Read the next page while half the window is left, so consumers never wait for it.
    // Held bytes count deliveries awaiting an ack too; a window emptied by consumers that hold
    // many unacknowledged messages (prefetch 0) still gets the next page, or the queue would
    // stop short of its backlog.
    const bool low = queue->windowCount() <= m_windowMessages / 2 &&
                     (queue->heldBytes() <= m_windowBytes / 2 || queue->windowCount() == 0);
    if (!low)
        return;
    if (queue->windowCount() > 0 && m_live.heldBytes() >= m_budgetBytes)
        return; // all windows together are full; this one still has messages to hand out
    const quint64 ticket = ++m_nextTicket;
    backlog.readTicket = ticket;
    const QString name = queue->name();
    m_store.loadQueuePage(name, backlog.afterEntryId, backlog.fromMessageId, pageLimit(queue),
                          [this, name, ticket](Result<storage::QueuePage> page) {
                              Queue *target = m_topology.queue(name);
                              if (!target || target->backlog.readTicket != ticket)
                                  return; // purged or deleted meanwhile: the page is stale
                              Queue::Backlog &backlog = target->backlog;
                              backlog.readTicket = 0;
                              if (!page) {
                                  qCWarning(lcRouter, "cannot read the next page of queue %s: %s",
                                            qPrintable(name), qPrintable(page.error()));
                                  QTimer::singleShot(PageRetryMs, [this, name] {
                                      if (Queue *retry = m_topology.queue(name))
                                          refill(retry);
                                  });
                                  return;
                              }
                              ++m_pagesRead;
                              const QList<storage::QueueEntry> &entries = page.value().entries;
                              if (entries.isEmpty() && backlog.uncounted)
                                  return; // nothing behind the window yet; the count settles it
                              if (entries.isEmpty()) {
                                  // Counted but not in the database: nothing more can come from it.
                                  qCWarning(
                                      lcRouter,
                                      "queue %s: %lld messages counted in its backlog are not in "
                                      "storage; the count is reset",
                                      qPrintable(name), qlonglong(backlog.messages));
                                  backlog = Queue::Backlog{};
                                  return;
                              }
                              for (const storage::QueueEntry &entry : entries) {
                                  const MessagePtr message = messageFor(entry);
                                  target->ready().push_back(ReadyMessage{message, entry.redelivered,
                                                                         entry.redelivered ? 1 : 0,
                                                                         deadLetterRecord(entry)});
                                  m_live.hold(target, message);
                                  --backlog.messages;
                                  backlog.bytes -= message->envelope.size();
                              }
                              backlog.afterEntryId = entries.constLast().entryId;
                              backlog.fromMessageId.clear();
                              // Bytes recovered at start-up are partly an estimate: never below
                              // zero, and none once the last message is in memory. Uncounted,
                              // both are relative (queue.h) and stay as they are.
                              if (!backlog.uncounted) {
                                  if (backlog.messages <= 0 || backlog.bytes < 0)
                                      backlog.bytes = 0;
                                  if (backlog.messages <= 0)
                                      backlog.messages = 0;
                              }
                              if (onPageArrived)
                                  onPageArrived(target);
                          });
}

} // namespace cmq
