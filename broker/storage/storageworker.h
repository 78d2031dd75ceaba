#pragma once
// The storage thread's side of Storage: owns the database connection (QSqlDatabase may only be
// used by the thread that opened it), runs jobs in arrival order, notices a lost PostgreSQL
// connection, reconnects with backoff, and keeps delivery updates until they are written.
// Lives in its own QThread; every method below runs on that thread.

#include <functional>
#include <memory>
#include <optional>

#include <QElapsedTimer>
#include <QObject>

#include "config/config.h"
#include "deliverystore.h"
#include "publishstore.h"
#include "sqlsession.h"
#include "storage.h"

class QTimer;

namespace cmq::storage {

class BacklogCounter;

class SqliteCheckpointer;

class StorageWorker final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(StorageWorker)

public:
    template <typename T> using Reply = std::function<void(T)>;

    struct BatchReport
    {
        QList<PublishResult> results;
        double commitMs = 0; // from receiving the batch to knowing its outcome
    };

    StorageWorker(const Config::Database &settings, const QByteArray &aesKey,
                  const QString &connectionName, QObject *parent = nullptr);
    ~StorageWorker() override;

    // Called on the worker thread whenever availability changes. Set before the thread starts.
    void setAvailabilityHandler(std::function<void(bool)> handler);
    void setRetentionDays(int days);

    // `fencingEpoch` (PostgreSQL; 0 = none): every write of this connection checks it is still
    // the current leadership epoch (migration 3, docs/STORAGE.md).
    Result<RecoveredState> openAndRecover(qint64 fencingEpoch);

    // PostgreSQL's delivery-update connection (docs/STORAGE.md, "Delivery updates on a
    // connection of their own"): opens the connection and declares the epoch, nothing else;
    // such a worker only writes the updates handed to it.
    Status openForUpdates(qint64 fencingEpoch);
    // From here on, updates handed to this worker go to `updater` (on its own thread) once the
    // jobs before them here are done, and a job that must see them waits until it has written
    // them. Null: written here, between the other jobs.
    void setUpdateWriter(StorageWorker *updater) { m_updater = updater; }

    void publish(const QList<MessageRecord> &records, Reply<BatchReport> reply);
    void run(const std::function<Status(SqlSession &)> &job, Reply<Status> reply);
    void savePublicKey(const QString &clientId, const QByteArray &publicKey, Reply<Status> reply);
    void loadPublicKey(const QString &clientId, Reply<Result<std::optional<QByteArray>>> reply);
    void applyUpdates(const QList<DeliveryUpdate> &updates);
    void purgeExpired(Reply<Result<qint64>> reply); // reply may be empty
    void setRecoveryWindow(int messagesPerQueue) { m_recoveryWindow = messagesPerQueue; }
    void loadQueuePage(const QString &queue, qint64 afterEntryId, const QByteArray &fromMessageId,
                       int limit, Reply<Result<QueuePage>> reply);
    void senderOfQueued(const QByteArray &messageId, Reply<Result<std::optional<QString>>> reply);
    // The count openAndRecover() left to the background; `reply` is called on the counter's
    // thread.
    void countQueueBacklogs(Reply<Result<QList<QueueBacklog>>> reply);
    void shutdown();

private:
    struct InDoubtBatch
    {
        PublishPlan plan;
        qint64 token = 0;
        Reply<BatchReport> reply;
        QElapsedTimer timer;
    };
    struct BackendIdentity
    {
        int pid = 0;
        QString started; // backend_start as text: with the pid, names one server process
    };

    bool openConnection(QString *error);
    void closeConnection();
    bool connectionAlive();
    bool reconnect();
    void markUnavailable(const QString &reason);
    void scheduleReconnect();
    void tryReconnect();
    bool settleInDoubt();
    void terminateLostBackend();
    void flushPendingUpdates();
    void writeUpdatesHandedOver();
    void purgeStep(const QDateTime &cutoff, qint64 removedSoFar, Reply<Result<qint64>> reply);
    static qint64 newCommitToken();

    // Runs an idempotent job; on a lost connection reconnects once and runs it again, then
    // gives up as "storage unavailable" and sets *lost.
    template <typename Job>
    auto runJob(Job &&job, bool *lost = nullptr) -> decltype(job(std::declval<SqlSession &>()));

    const Config::Database m_settings;
    const QByteArray m_aesKey;
    const QString m_connectionName;
    const Dialect *const m_dialect; // null for an unknown [database] driver
    std::function<void(bool)> m_onAvailability;
    SqlSession m_session;
    bool m_opened = false;
    bool m_available = false;
    bool m_shuttingDown = false;
    bool m_flushScheduled = false;
    int m_retentionDays = 7;
    int m_recoveryWindow = 0;
    qint64 m_fencingEpoch = 0;
    bool m_updatesOnly = false; // opened by openForUpdates(): see SqlSession::updatesOnly()
    int m_backoffMs = 0;
    BackendIdentity m_backend;
    std::optional<BackendIdentity> m_lostBackend;
    std::optional<InDoubtBatch> m_inDoubt;
    QList<DeliveryUpdate> m_pendingUpdates;
    StorageWorker *m_updater = nullptr;        // see setUpdateWriter()
    std::unique_ptr<BacklogCounter> m_counter; // from openAndRecover() until its count is done
    // SQLite's log checkpoints on a thread of their own while the writer is open (the file's
    // writer only: not for :memory: or PostgreSQL).
    std::unique_ptr<SqliteCheckpointer> m_checkpointer;
    QTimer *m_reconnectTimer;
    QTimer *m_purgeTimer;
    QTimer *m_updateTimer; // spaces the delivery-update transactions (UpdateWriteIntervalMs)
};

} // namespace cmq::storage
