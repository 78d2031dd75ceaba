#pragma once
// Durable state of the broker, behind one main-thread facade. A single worker thread owns the
// database connection (QSQLITE or QPSQL); this class only queues jobs to it and hands results
// back on the caller's thread. Publishes are group-committed: records that arrive while a
// transaction is in flight go into the next one, and each caller hears back only after the
// transaction that holds its records has committed (or failed).

#include <functional>
#include <memory>
#include <optional>

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include "config/config.h"
#include "storage/auditrecord.h"
#include "storage/routerstore.h"
#include "util/result.h"

class QThread;
class QTimer;

namespace cmq::storage {

class SqlSession;
class StorageWorker;
struct MessageListingQuery;
struct MessageListingPage;

struct ExchangeRecord
{
    QString name;
    QString type = "direct";
    QString creator; // CN that declared it first
};

struct QueueRecord
{
    QString name;
    QString owner;                  // CN that declared it first
    qint64 maxLength = 0;           // messages; 0 = the config default at the time of use
    QString overflow = "drop-head"; // drop-head | reject-publish
    qint64 messageTtlMs = 0;        // 0 = messages do not expire (unless by their own TTL)
    // Default-initialised, so the brace forms written before these fields still compile.
    QString deadLetterExchange{};    // empty: no dead-lettering
    QString deadLetterRoutingKey{};  // empty: the message's own routing key
    qint64 deliveryLimit = 0;        // 0 = unlimited
    bool deadLetterOverflow = false; // drop-head evictions are dead-lettered too
};

struct BindingRecord
{
    QString queue;
    QString exchange;
    QString routingKey;
};

// One published message and the queues it was routed to.
struct MessageRecord
{
    QByteArray messageId;
    QString sender; // publisher CN
    QString exchange;
    QString routingKey;
    QByteArray envelope; // the publisher's exact JSON bytes (ciphertext; never plaintext)
    QDateTime sentTime;  // when the broker received it, UTC
    QStringList queues;  // never empty: unroutable publishes are not stored
};

enum class PublishOutcome {
    Stored,    // committed: metadata, envelope and one entry per queue
    Duplicate, // message_id already known to the database: nothing written for it
    Failed,    // the transaction failed: nothing written; `error` says why
};

struct PublishResult
{
    PublishOutcome outcome = PublishOutcome::Failed;
    QString error;
};

// A message waiting in a queue (not yet acknowledged), as reloaded at start-up.
struct QueueEntry
{
    QString queue;
    QByteArray messageId;
    QString sender;
    QString exchange;
    QString routingKey;
    QByteArray envelope;
    QDateTime sentTime;
    bool redelivered = false; // it had been delivered before the restart but never acknowledged
    qint64 entryId = 0;       // queue_entries.id: the queue's order, where the next page starts
    // Set (by a page read) when the entry is a dead letter: its record's reason (empty: not
    // one), original queue, time and delivery count (table dead_letters). Default-initialised,
    // so the brace forms written before these fields still compile.
    QString deadLetterReason{};
    QString deadLetterOriginalQueue{};
    QDateTime deadLetteredAt{};
    qint64 deadLetterDeliveryCount{};
};

// Everything one queue holds in the database (ready and awaiting an ack), as numbers.
struct QueueBacklog
{
    QString queue;
    qint64 messages = 0;
    qint64 bytes = 0; // envelope bytes
};

// Why and where from a message waiting in a dead-letter queue came (core/deadletter.h).
struct DeadLetterEntry
{
    QString queue; // the dead-letter queue it waits in
    QByteArray messageId;
    QString reason; // rejected | expired | overflow | delivery_limit
    QString originalQueue;
    QDateTime at;
    qint64 deliveryCount = 0;
};

struct RecoveredState
{
    QList<ExchangeRecord> exchanges;
    QList<QueueRecord> queues;
    QList<BindingRecord> bindings;
    QList<QueueEntry> entries;          // per queue in publish order (queues interleaved is fine)
    QList<DeadLetterEntry> deadLetters; // records of entries that are dead letters
    // With a recovery window (Storage::setRecoveryWindow), `entries` holds only each queue's
    // head and this what every queue holds in all; empty when `entries` is everything. Queues
    // whose head filled the window are not counted at start-up: they are in `uncounted`, and
    // countQueueBacklogs() counts them in the background (docs/STORAGE.md, "Recovery at
    // start-up"); `backlogs` then has the others.
    QList<QueueBacklog> backlogs;
    QStringList uncounted;
};

// The next entries of one queue in its order, read while consumers drain it.
struct QueuePage
{
    QList<QueueEntry> entries;
};

class Storage final : public QObject, public RouterStore
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Storage)

public:
    explicit Storage(const Config::Database &settings, const QByteArray &aesKey,
                     QObject *parent = nullptr);
    ~Storage() override; // drains pending batched writes, then stops the worker

    // Start-up (or takeover) only, blocking: connect (retrying as configured), apply
    // migrations, load state. With a `fencingEpoch` (PostgreSQL), every write transaction
    // fails once another node has taken over (docs/STORAGE.md, Leadership and fencing).
    Result<RecoveredState> openAndRecover(qint64 fencingEpoch = 0);

    using StatusCallback = std::function<void(Status)>;

    // Group commit. `done` gets one result per record, in order.
    void publish(QList<MessageRecord> records, std::function<void(QList<PublishResult>)> done);

    void saveExchange(const ExchangeRecord &exchange, StatusCallback done);
    void saveQueue(const QueueRecord &queue, StatusCallback done);
    void saveBinding(const BindingRecord &binding, StatusCallback done);
    void deleteQueue(const QString &queue, StatusCallback done); // its entries and bindings too
    void purgeQueue(const QString &queue, StatusCallback done);  // its entries only
    void moveEntries(QList<EntryMove> moves, StatusCallback done);

    // Batched, fire-and-forget (flushed every 500 ms or 50 items, and on shutdown).
    void markDelivered(const QString &queue, const QByteArray &messageId);
    void markAcknowledged(const QString &queue, const QByteArray &messageId); // removes entry
    void markEvicted(const QString &queue, const QByteArray &messageId);      // removes entry

    // The key directory. Keys are stored AES-256-GCM encrypted with the configured key.
    void savePublicKey(const QString &clientId, const QByteArray &publicKeyBase64,
                       StatusCallback done);
    void loadPublicKey(const QString &clientId,
                       std::function<void(Result<std::optional<QByteArray>>)> done);

    // Start-up and takeover load at most this many messages of each queue (its head); the rest
    // stays in the database and is paged in with loadQueuePage(). 0 (the default) loads every
    // entry. Set before openAndRecover().
    void setRecoveryWindow(int messagesPerQueue);

    // Up to `limit` entries of `queue` after entry `afterEntryId`, or, with `fromMessageId`,
    // from that message's entry on, in the queue's order. Not ordered behind waiting publishes:
    // it reads what is committed, which is all a caller can know of.
    void loadQueuePage(const QString &queue, qint64 afterEntryId, const QByteArray &fromMessageId,
                       int limit, std::function<void(Result<QueuePage>)> done) override;
    // The publisher of `messageId` while it waits in some queue; nullopt when in none.
    void senderOfQueued(const QByteArray &messageId,
                        std::function<void(Result<std::optional<QString>>)> done) override;
    void requeueBacklogDeadLetters(
        const QString &queue, qint64 afterEntryId, const QByteArray &fromMessageId,
        std::function<void(Result<QList<RequeuedBacklog>>)> done) override;
    // Every queue's entries as openAndRecover() found them (its snapshot), counted on a
    // connection and thread of their own; once, after openAndRecover() left queues uncounted.
    void countQueueBacklogs(std::function<void(Result<QList<QueueBacklog>>)> done) override;

    // False while the database is unreachable; publishes then fail fast with
    // "storage unavailable" instead of queueing without bound.
    bool isAvailable() const;

    // --- Additions to the original contract ---

    // Group-commit bounds: a batch takes whatever waits, up to this many records or bytes of
    // envelope; the rest waits for the next one.
    static constexpr int MaxBatchRecords = 1024;
    static constexpr qint64 MaxBatchBytes = 8 << 20;
    // Pipelined group commit: a second batch may wait at the worker while one commits, so the
    // database need not idle between transactions while the broker hands back one batch's
    // outcome and reads the next publishes. The worker runs them in order on its one
    // connection (ordering unchanged). A second batch goes early only with at least
    // MinPipelinedBatch records, so a trickle still shares one commit rather than paying a
    // flush each; and a burst meeting an idle worker is split in two, so that the publishers'
    // next publishes arrive while the second half commits (bench/README.md, "Where W=256
    // waits; a pipelined group commit").
    static constexpr int MaxBatchesInFlight = 2;
    static constexpr int MinPipelinedBatch = 64;
    // How many of `waiting` records the next batch takes now, with `batchesInFlight` batches
    // handed to the worker and not yet answered (0: wait for one to finish).
    static qsizetype publishBatchLimit(qsizetype waiting, int batchesInFlight);
    // Delivery updates are written every UpdateFlushIntervalMs or at UpdateFlushItems.
    static constexpr int UpdateFlushIntervalMs = 500;
    static constexpr int UpdateFlushItems = 50;
    // Delivered marks are held this long (or until the delivery is acknowledged or evicted, or
    // flushDeliveryUpdates()), so a prompt ack writes both in one update.
    static constexpr int DeliveredHoldMs = 500;

    // Metadata of messages that left every queue is kept this long (for audit and duplicate
    // detection), then purged by an hourly background job. Default 7; 0 purges at the next run.
    void setRetentionDays(int days);

    // Hands the buffered delivery updates to the worker now rather than at the next tick, e.g.
    // on graceful shutdown (the destructor does it too).
    void flushDeliveryUpdates();

    // Runs the retention purge now; `done` gets the number of metadata rows removed.
    void purgeExpiredMetadata(std::function<void(Result<qint64>)> done);

    // The admin audit trail (storageaudit.cpp): one record, after the jobs issued before it;
    // and, blocking, at start-up, the newest `limit` records, oldest first.
    void saveAudit(const AuditRecord &record, StatusCallback done);
    Result<QList<AuditRecord>> loadAudit(int limit);

    // One page of a queue's message metadata, read from the database (storagemessages.cpp).
    void listQueueMessages(const MessageListingQuery &query,
                           std::function<void(Result<MessageListingPage>)> done);

    // For metrics and tests; all counters since construction.
    struct Stats
    {
        quint64 publishBatches = 0; // publish transactions sent to the worker
        quint64 publishRecords = 0; // records in those transactions
        quint64 storedRecords = 0;
        quint64 duplicateRecords = 0;
        quint64 failedRecords = 0; // including those refused while unavailable
        int lastBatchRecords = 0;
        int maxBatchRecords = 0;
        double lastCommitMs = 0; // worker time from receiving a batch to its outcome
        double maxCommitMs = 0;
        double totalCommitMs = 0;
        quint64 updateFlushes = 0; // delivery-update batches handed to the worker
        quint64 updateItems = 0;
        quint64 outages = 0; // times availability went from true to false
    };
    Stats stats() const { return m_stats; }

Q_SIGNALS:
    void availabilityChanged(bool available);

private:
    struct Pending; // publishes waiting for a batch, jobs held behind them, buffered updates

    void schedulePublishDispatch();
    void dispatchPublishes();
    void failWaitingPublishes(const QString &error);
    void runOrdered(std::function<Status(SqlSession &)> job, StatusCallback done);
    void enqueueOrdered(std::function<void()> post);
    void releaseOrdered();
    void queueUpdate(int kind, const QString &queue, const QByteArray &messageId);
    void flushUpdates(bool includeHeld);
    void setAvailable(bool available);
    void openUpdateConnection(qint64 fencingEpoch);
    template <typename T> std::function<void(T)> onOwnThread(std::function<void(T)> done);

    const Config::Database m_settings;
    QThread *m_thread;
    StorageWorker *m_worker;
    // PostgreSQL's delivery-update connection, on a thread of its own; null without one.
    QThread *m_updaterThread = nullptr;
    StorageWorker *m_updater = nullptr;
    QTimer *m_updateTimer;
    QTimer *m_heldTimer;
    std::unique_ptr<Pending> m_pending;
    Stats m_stats;
    bool m_opened = false;
    bool m_available = false;
    int m_batchesInFlight = 0;
    bool m_dispatchScheduled = false;
};

} // namespace cmq::storage
