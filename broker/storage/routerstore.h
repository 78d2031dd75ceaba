#pragma once
// The part of storage the router's parts call: topology writes, the group-committed publish
// and the batched delivery marks. storage::Storage implements it over its worker thread; the
// router's unit tests implement it in memory. Callbacks run on the caller's thread, later.

#include <functional>
#include <optional>

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>

#include "util/result.h"

namespace cmq::storage {

struct ExchangeRecord;
struct QueueRecord;
struct BindingRecord;
struct MessageRecord;
struct PublishResult;
struct QueuePage;
struct QueueBacklog;

// A message's entry leaves one queue for others, in one transaction with its dead-letter
// record: dead-lettering (a `reason`) and requeueing a dead letter back (no reason). The
// envelope and metadata stay as they are; only the queue entries move.
struct EntryMove
{
    QString fromQueue;
    QByteArray messageId;
    QStringList toQueues; // may be empty: the entry just goes
    QString reason;       // rejected | expired | overflow | delivery_limit; empty when requeued
    QString originalQueue;
    QDateTime at;
    qint64 deliveryCount = 0;
};

// What requeueing a dead-letter queue's backlog sent to one original queue: counted into that
// queue's backlog (the entries are new, behind everything it holds).
struct RequeuedBacklog
{
    QString queue;
    qint64 messages = 0;
    qint64 bytes = 0;
    QByteArray firstMessageId; // the first moved entry: where that backlog starts if it was empty
};

class RouterStore
{
public:
    virtual ~RouterStore() = default;

    using StatusCallback = std::function<void(Status)>;

    // Group commit. `done` gets one result per record, in order.
    virtual void publish(QList<MessageRecord> records,
                         std::function<void(QList<PublishResult>)> done) = 0;

    virtual void saveExchange(const ExchangeRecord &exchange, StatusCallback done) = 0;
    virtual void saveQueue(const QueueRecord &queue, StatusCallback done) = 0;
    virtual void saveBinding(const BindingRecord &binding, StatusCallback done) = 0;
    // Run after every publish issued before them, results handed back in order.
    virtual void deleteQueue(const QString &queue, StatusCallback done) = 0; // entries, bindings
    virtual void purgeQueue(const QString &queue, StatusCallback done) = 0;  // its entries only
    // All moves as one transaction, after every publish issued before it.
    virtual void moveEntries(QList<EntryMove> moves, StatusCallback done) = 0;

    // Fire-and-forget.
    virtual void markDelivered(const QString &queue, const QByteArray &messageId) = 0;
    virtual void markAcknowledged(const QString &queue, const QByteArray &messageId) = 0;
    virtual void markEvicted(const QString &queue, const QByteArray &messageId) = 0;

    // Paging a queue's backlog (docs/STORAGE.md, "Queue backlog"). A store that keeps no
    // backlog outside memory (the unit tests' fakes) never gets asked.
    virtual void loadQueuePage(const QString &queue, qint64 afterEntryId,
                               const QByteArray &fromMessageId, int limit,
                               std::function<void(Result<QueuePage>)> done);
    virtual void senderOfQueued(const QByteArray &messageId,
                                std::function<void(Result<std::optional<QString>>)> done);
    // Moves every dead letter of `queue`'s backlog (its entries from the page start on) back to
    // its original queue, in one transaction, after every job issued before it.
    virtual void requeueBacklogDeadLetters(const QString &queue, qint64 afterEntryId,
                                           const QByteArray &fromMessageId,
                                           std::function<void(Result<QList<RequeuedBacklog>>)> done);
    // What every queue held in the database at start-up (RecoveredState::uncounted), counted
    // after the broker began serving; whatever changed since is the core's to add.
    virtual void countQueueBacklogs(std::function<void(Result<QList<QueueBacklog>>)> done);
};

} // namespace cmq::storage
