#include "storageworker.h"

#include <QFileInfo>
#include <QRandomGenerator>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QTimer>

#include "backlogcounter.h"
#include "backlogstore.h"
#include "connection.h"
#include "deadletterstore.h"
#include "keystore.h"
#include "migrations.h"
#include "recovery.h"
#include "sqlitecheckpointer.h"
#include "storagelog.h"

namespace cmq::storage {

namespace {

constexpr int FirstBackoffMs = 100;
constexpr int MaxBackoffMs = 5000;
constexpr int MaxUpdatesPerTransaction = 500;
// Delivery updates handed over are written this long after the first of them (or at once from
// MaxUpdatesPerTransaction on), so hand-overs arriving together share a transaction. Short, since
// a publish that arrives during an update transaction waits for it on the one connection: at
// 100 ms a flush carried 200 updates at 1,000 msg/s and took 1.8 ms (PostgreSQL) to 2.4 ms
// (SQLite), which made the end-to-end p99 3.5 to 4 ms; at 5 ms it is 1.7 to 2.5 ms, with W=256
// and 64 x W=1 unchanged (bench/README.md, "Delivery updates no longer hold up publishes").
constexpr int UpdateWriteIntervalMs = 5;
// On a connection of their own (PostgreSQL, SqlSession::updatesOnly()) no publish waits for
// them: fewer, fuller statements there cost PostgreSQL less (each execution of the update
// statement sets up its plan once, however few rows it carries), and a crash loses at most this
// much more acknowledgement state, which means redeliveries, never a lost message.
constexpr int SeparateUpdateWriteIntervalMs = 50;
constexpr int PurgeChunk = 10000;
constexpr int FirstPurgeDelayMs = 60 * 1000;
constexpr int PurgeIntervalMs = 60 * 60 * 1000;

QString unavailableError()
{
    return QStringLiteral("storage unavailable");
}

// What a publisher is told when the epoch trigger (migration 3) refused the write: this node was
// deposed (frozen, cut off) and another one is active. Never the database's own text, which
// names tables, functions and the SQL (docs/PROTOCOL.md, "Publishing").
QString publishFailure(const QString &databaseError)
{
    if (!databaseError.contains(QLatin1StringView("fenced: leadership epoch")))
        return databaseError;
    qCWarning(lcStorage).noquote() << "publish refused, this node is no longer the active one:"
                                   << databaseError;
    return QStringLiteral("Not the active node: another node has taken over, the message was "
                          "not stored");
}

} // namespace

StorageWorker::StorageWorker(const Config::Database &settings, const QByteArray &aesKey,
                             const QString &connectionName, QObject *parent)
    : QObject(parent), m_settings(settings), m_aesKey(aesKey), m_connectionName(connectionName),
      m_dialect(dialectNamed(settings.driver)), m_reconnectTimer(new QTimer(this)),
      m_purgeTimer(new QTimer(this)), m_updateTimer(new QTimer(this))
{
    m_updateTimer->setSingleShot(true);
    connect(m_updateTimer, &QTimer::timeout, this, &StorageWorker::flushPendingUpdates);
    m_reconnectTimer->setSingleShot(true);
    connect(m_reconnectTimer, &QTimer::timeout, this, &StorageWorker::tryReconnect);
    m_purgeTimer->setSingleShot(true);
    connect(m_purgeTimer, &QTimer::timeout, this, [this] {
        m_purgeTimer->start(PurgeIntervalMs);
        purgeExpired({});
    });
}

StorageWorker::~StorageWorker()
{
    closeConnection();
}

void StorageWorker::setAvailabilityHandler(std::function<void(bool)> handler)
{
    m_onAvailability = std::move(handler);
}

void StorageWorker::setRetentionDays(int days)
{
    m_retentionDays = qMax(0, days);
}

Result<RecoveredState> StorageWorker::openAndRecover(qint64 fencingEpoch)
{
    m_fencingEpoch = fencingEpoch;
    using R = Result<RecoveredState>;
    if (!m_dialect) {
        return R::failure(QStringLiteral("unknown database.driver '%1' (expected postgresql or "
                                         "sqlite)")
                              .arg(m_settings.driver));
    }
    const int attempts = qMax(1, m_settings.connectAttempts);
    QString error;
    for (int attempt = 1;; ++attempt) {
        if (openConnection(&error))
            break;
        qCWarning(lcStorage, "database connection attempt %d of %d failed: %s", attempt, attempts,
                  qUtf8Printable(error));
        if (attempt >= attempts)
            return R::failure(error);
        // Start-up only: nothing else is waiting on this thread yet.
        QThread::msleep(qMax(0, m_settings.connectRetryDelayMs));
    }

    if (Status st = migrate(m_session); !st) {
        closeConnection();
        return R::failure(st.error());
    }
    // The backlog count waits for no one: a snapshot of its own, fixed here, before anything
    // is served, and counted after (backlogcounter.h). Without it (no second connection to be
    // had) start-up counts, as it did before.
    m_counter.reset();
    const bool inMemory =
        !m_dialect->isPostgres() && m_settings.path == QLatin1StringView(":memory:");
    if (m_recoveryWindow > 0 && !inMemory) {
        Result<std::unique_ptr<BacklogCounter>> counter = BacklogCounter::open(
            m_settings, *m_dialect, m_connectionName + QStringLiteral("-count"));
        if (counter)
            m_counter = std::move(counter).value();
        else
            qCWarning(lcStorage, "queue backlogs are counted before serving: %s",
                      qUtf8Printable(counter.error()));
    }
    Result<RecoveredState> state = loadState(m_session, m_recoveryWindow, !m_counter);
    if (!state || state->uncounted.isEmpty())
        m_counter.reset();
    if (!state) {
        closeConnection();
        return state;
    }
    m_opened = true;
    m_available = true;
    m_purgeTimer->start(FirstPurgeDelayMs);
    return state;
}

Status StorageWorker::openForUpdates(qint64 fencingEpoch)
{
    m_fencingEpoch = fencingEpoch;
    if (!m_dialect || !m_dialect->isPostgres())
        return failure(QStringLiteral("a delivery-update connection needs PostgreSQL"));
    m_updatesOnly = true;
    QString error;
    if (!openConnection(&error))
        return failure(error);
    m_opened = true;
    m_available = true;
    return success();
}

bool StorageWorker::openConnection(QString *error)
{
    // A checkpointer hooks the connection it started on, and that one is about to be replaced.
    m_checkpointer.reset();
    // Named apart from the leader election's connection, which a takeover must not end.
    Result<SqlSession> opened = openSession(m_settings, *m_dialect, m_connectionName,
                                            QStringLiteral("ciphermq-broker"));
    if (!opened) {
        *error = opened.error();
        return false;
    }
    m_session = std::move(opened).value();

    if (m_dialect->isPostgres() && m_fencingEpoch > 0) {
        // Declared for the whole session, on every (re)connect, before any write.
        if (const Status st =
                m_session.exec(QStringLiteral("SELECT set_config('ciphermq.epoch', '%1', false)")
                                   .arg(m_fencingEpoch));
            !st) {
            *error = QStringLiteral("cannot declare the leadership epoch: ") + st.error();
            m_session.close();
            m_session = SqlSession();
            return false;
        }
    }
    if (m_updatesOnly) {
        // The delivery-update transactions' settings, for the whole session, on every
        // (re)connect: each update statement then runs alone as its own transaction, one round
        // trip instead of four (deliverystore.cpp, TransactionSettings).
        if (const Status st = m_session.exec(QString::fromLatin1(updatesOnlySessionSettings()));
            !st) {
            *error = QStringLiteral("cannot set the delivery-update session: ") + st.error();
            m_session.close();
            m_session = SqlSession();
            return false;
        }
        m_session.setUpdatesOnly();
    }
    if (!m_dialect->isServer && m_settings.path != QLatin1StringView(":memory:")) {
        m_checkpointer = SqliteCheckpointer::start(lite::connectionOf(m_session.database()),
                                                   QFileInfo(m_settings.path).absoluteFilePath());
    }
    if (m_dialect->isPostgres()) {
        QSqlQuery query = m_session.newQuery();
        if (m_session.run(query, QStringLiteral("SELECT pg_backend_pid(), backend_start::text "
                                                "FROM pg_stat_activity "
                                                "WHERE pid = pg_backend_pid()")) &&
            query.next()) {
            m_backend = {query.value(0).toInt(), query.value(1).toString()};
        }
        (void)m_session.finish(query);
    }
    return true;
}

void StorageWorker::closeConnection()
{
    m_checkpointer.reset(); // while the writer it hooks is still open
    closeSession(m_session, m_connectionName);
}

bool StorageWorker::connectionAlive()
{
    if (!m_dialect->isServer)
        return true; // SQLite errors are about the statement or the file, not a link
    // QPSQL's isOpen() is libpq's PQstatus(): it turns bad once a statement hit a dead socket.
    if (!m_session.database().isOpen())
        return false;
    return bool(m_session.exec(QStringLiteral("SELECT 1")));
}

bool StorageWorker::reconnect()
{
    if (m_dialect->isServer && m_backend.pid != 0)
        m_lostBackend = m_backend;
    m_backend = {};
    m_checkpointer.reset(); // while the writer it hooks is still open
    m_session.close();
    QString error;
    if (!openConnection(&error)) {
        qCWarning(lcStorage).noquote() << "reconnect failed:" << error;
        return false;
    }
    qCInfo(lcStorage, "reconnected to the database");
    return true;
}

void StorageWorker::markUnavailable(const QString &reason)
{
    if (m_available) {
        m_available = false;
        qCWarning(lcStorage).noquote() << "database unavailable:" << reason;
        if (m_onAvailability)
            m_onAvailability(false);
    }
    scheduleReconnect();
}

void StorageWorker::scheduleReconnect()
{
    if (m_shuttingDown)
        return;
    m_backoffMs = m_backoffMs == 0 ? FirstBackoffMs : qMin(m_backoffMs * 2, MaxBackoffMs);
    m_reconnectTimer->start(m_backoffMs);
}

void StorageWorker::tryReconnect()
{
    if (m_available || m_shuttingDown)
        return;
    if (!reconnect() || (m_inDoubt && !settleInDoubt())) {
        scheduleReconnect();
        return;
    }
    m_backoffMs = 0;
    m_available = true;
    qCInfo(lcStorage, "database available again");
    if (m_onAvailability)
        m_onAvailability(true);
    flushPendingUpdates();
}

// The old server process might still be running the statement that lost its client (a network
// partition rather than a restart); end it first, so it cannot commit after we have looked.
void StorageWorker::terminateLostBackend()
{
    if (!m_lostBackend)
        return;
    const BackendIdentity lost = *m_lostBackend;
    m_lostBackend.reset();
    const Status st = m_session.exec(
        QStringLiteral("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
                       "WHERE pid = %1 AND backend_start::text = %2")
            .arg(lost.pid)
            .arg(m_session.text(lost.started)));
    if (!st)
        qCWarning(lcStorage).noquote() << "cannot end the old server process:" << st.error();
}

// After reconnecting with a batch whose commit was never confirmed: its rows carry its token,
// so they say whether it committed, and which of its records were new.
bool StorageWorker::settleInDoubt()
{
    terminateLostBackend();
    InDoubtBatch &batch = *m_inDoubt;
    const Result<InDoubtResolution> resolved = resolveInDoubt(m_session, batch.plan, batch.token);
    if (!resolved) {
        if (!connectionAlive())
            return false;
        qCWarning(lcStorage).noquote() << "cannot settle an unconfirmed batch:" << resolved.error();
    }
    if (resolved && !resolved->inserted.isEmpty()) {
        completePlan(batch.plan, resolved->inserted);
    } else {
        for (qsizetype index : batch.plan.candidates) {
            const bool exists = resolved && resolved->existing.contains(batch.plan.ids[index]);
            batch.plan.results[index] =
                exists ? PublishResult{PublishOutcome::Duplicate, {}}
                       : PublishResult{PublishOutcome::Failed, unavailableError()};
        }
    }
    qCInfo(lcStorage, "settled a batch of %lld records whose commit was unconfirmed",
           qint64(batch.plan.results.size()));
    const Reply<BatchReport> reply = std::move(batch.reply);
    const BatchReport report{batch.plan.results, batch.timer.nsecsElapsed() / 1e6};
    m_inDoubt.reset();
    reply(report);
    return true;
}

template <typename Job>
auto StorageWorker::runJob(Job &&job, bool *lost) -> decltype(job(std::declval<SqlSession &>()))
{
    using R = decltype(job(m_session));
    if (lost)
        *lost = false;
    if (!m_available || !m_opened) {
        if (lost)
            *lost = true;
        return R::failure(m_opened ? unavailableError() : QStringLiteral("storage not open"));
    }
    R result = job(m_session);
    if (result.ok() || connectionAlive())
        return result;
    // The seed also reconnects once before giving up; the jobs are idempotent, so running one
    // again on the new connection is safe.
    qCWarning(lcStorage).noquote() << "lost the database connection:" << result.error();
    if (reconnect()) {
        result = job(m_session);
        if (result.ok() || connectionAlive())
            return result;
    }
    markUnavailable(result.error());
    if (lost)
        *lost = true;
    return R::failure(unavailableError());
}

qint64 StorageWorker::newCommitToken()
{
    qint64 token = 0;
    while (token == 0)
        token = qint64(QRandomGenerator::system()->generate64() >> 1);
    return token;
}

void StorageWorker::publish(const QList<MessageRecord> &records, Reply<BatchReport> reply)
{
    QElapsedTimer timer;
    timer.start();
    PublishPlan plan = planPublish(records);
    auto failAll = [&](const QString &error) {
        for (qsizetype index : plan.candidates)
            plan.results[index] = {PublishOutcome::Failed, error};
    };
    if (!m_available || !m_opened) {
        failAll(m_opened ? unavailableError() : QStringLiteral("storage not open"));
        reply({plan.results, timer.nsecsElapsed() / 1e6});
        return;
    }

    qint64 token = newCommitToken();
    for (int attempt = 0;; ++attempt) {
        const Result<QSet<QString>> written = writePublishBatch(m_session, records, plan, token);
        if (written) {
            completePlan(plan, written.value());
            break;
        }
        if (connectionAlive()) {
            failAll(publishFailure(written.error()));
            break;
        }
        // Committed or not? Only the database can say, once we can reach it again.
        qCWarning(lcStorage).noquote()
            << "lost the database connection during a publish batch:" << written.error();
        if (attempt == 0 && reconnect()) {
            terminateLostBackend();
            const Result<InDoubtResolution> resolved = resolveInDoubt(m_session, plan, token);
            if (resolved && !resolved->inserted.isEmpty()) {
                completePlan(plan, resolved->inserted);
                break;
            }
            if (resolved) {
                token = newCommitToken(); // it never committed: write it again
                continue;
            }
        }
        m_inDoubt = InDoubtBatch{std::move(plan), token, std::move(reply), timer};
        markUnavailable(written.error());
        return;
    }
    reply({plan.results, timer.nsecsElapsed() / 1e6});
}

void StorageWorker::run(const std::function<Status(SqlSession &)> &job, Reply<Status> reply)
{
    // Updates handed over before this job are written before it, as when each hand-over was
    // written at once: a move of an entry after its delivered mark, a listing after an ack.
    writeUpdatesHandedOver();
    const Status st = runJob(job);
    if (reply)
        reply(st);
}

void StorageWorker::loadQueuePage(const QString &queue, qint64 afterEntryId,
                                  const QByteArray &fromMessageId, int limit,
                                  Reply<Result<QueuePage>> reply)
{
    writeUpdatesHandedOver(); // acknowledged or evicted entries handed over before are gone then
    reply(runJob([&](SqlSession &s) {
        return cmq::storage::loadQueuePage(s, queue, afterEntryId, fromMessageId, limit);
    }));
}

void StorageWorker::senderOfQueued(const QByteArray &messageId,
                                   Reply<Result<std::optional<QString>>> reply)
{
    writeUpdatesHandedOver(); // an entry acknowledged a moment ago is not found waiting
    reply(runJob([&](SqlSession &s) { return cmq::storage::senderOfQueued(s, messageId); }));
}

void StorageWorker::savePublicKey(const QString &clientId, const QByteArray &publicKey,
                                  Reply<Status> reply)
{
    reply(runJob([&](SqlSession &s) {
        return cmq::storage::savePublicKey(s, m_aesKey, clientId, publicKey);
    }));
}

void StorageWorker::loadPublicKey(const QString &clientId,
                                  Reply<Result<std::optional<QByteArray>>> reply)
{
    reply(
        runJob([&](SqlSession &s) { return cmq::storage::loadPublicKey(s, m_aesKey, clientId); }));
}

void StorageWorker::applyUpdates(const QList<DeliveryUpdate> &updates)
{
    if (m_updater) {
        // Everything handed to this thread before has been done (one FIFO), so the publishes
        // these updates refer to are committed when the other connection writes them.
        QMetaObject::invokeMethod(
            m_updater, [updater = m_updater, updates] { updater->applyUpdates(updates); },
            Qt::QueuedConnection);
        return;
    }
    m_pendingUpdates += updates;
    if (m_pendingUpdates.size() < MaxUpdatesPerTransaction) {
        if (!m_updateTimer->isActive())
            m_updateTimer->start(m_updatesOnly ? SeparateUpdateWriteIntervalMs
                                               : UpdateWriteIntervalMs);
        return;
    }
    if (m_flushScheduled)
        return;
    // Write after the jobs already queued: update batches that piled up behind a publish
    // transaction then share one transaction instead of taking one each.
    m_flushScheduled = true;
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_flushScheduled = false;
            flushPendingUpdates();
        },
        Qt::QueuedConnection);
}

// Before a job that must see the updates handed over before it (a page read must not find an
// entry acknowledged a moment ago). With an update connection this waits for it to have
// written all it was given; while it is unreachable it keeps them, and the job goes on, as
// with one connection.
void StorageWorker::writeUpdatesHandedOver()
{
    if (!m_updater)
        return flushPendingUpdates();
    QMetaObject::invokeMethod(
        m_updater, [updater = m_updater] { updater->flushPendingUpdates(); },
        Qt::BlockingQueuedConnection);
}

void StorageWorker::flushPendingUpdates()
{
    m_updateTimer->stop();
    while (m_available && m_opened && !m_pendingUpdates.isEmpty()) {
        const qsizetype count = qMin<qsizetype>(m_pendingUpdates.size(), MaxUpdatesPerTransaction);
        const QList<DeliveryUpdate> chunk = m_pendingUpdates.first(count);
        bool lost = false;
        const Status st =
            runJob([&](SqlSession &s) { return applyDeliveryUpdates(s, chunk); }, &lost);
        if (lost)
            return; // kept, and written once the database is back
        if (!st) {
            // Not a connection problem: the same statement would fail again.
            qCWarning(lcStorage).noquote()
                << "dropping" << count << "delivery updates:" << st.error();
        }
        m_pendingUpdates.remove(0, count);
    }
}

void StorageWorker::purgeExpired(Reply<Result<qint64>> reply)
{
    writeUpdatesHandedOver(); // so that acknowledgements handed over before count
    if (Status st = runJob([](SqlSession &s) { return purgeFinishedDeadLetters(s); }); !st)
        qCWarning(lcStorage).noquote() << "dead-letter record cleanup failed:" << st.error();
    const QDateTime cutoff = QDateTime::currentDateTimeUtc().addDays(-m_retentionDays);
    purgeStep(cutoff, 0, std::move(reply));
}

void StorageWorker::purgeStep(const QDateTime &cutoff, qint64 removedSoFar,
                              Reply<Result<qint64>> reply)
{
    if (m_shuttingDown)
        return;
    const Result<qint64> removed =
        runJob([&](SqlSession &s) { return purgeExpiredMetadata(s, cutoff, PurgeChunk); });
    if (!removed) {
        qCWarning(lcStorage).noquote() << "metadata purge failed:" << removed.error();
        if (reply)
            reply(removed);
        return;
    }
    const qint64 total = removedSoFar + removed.value();
    if (removed.value() >= PurgeChunk) {
        // Let queued publishes run between chunks.
        QTimer::singleShot(0, this, [this, cutoff, total, reply = std::move(reply)] {
            purgeStep(cutoff, total, reply);
        });
        return;
    }
    if (total > 0)
        qCInfo(lcStorage, "purged metadata of %lld finished messages", total);
    if (reply)
        reply(total);
}

void StorageWorker::countQueueBacklogs(Reply<Result<QList<QueueBacklog>>> reply)
{
    if (!m_counter)
        return reply(Result<QList<QueueBacklog>>::failure(QStringLiteral("nothing to count")));
    m_counter->start(std::move(reply));
}

void StorageWorker::shutdown()
{
    m_shuttingDown = true;
    m_counter.reset(); // a count still running is waited for
    m_reconnectTimer->stop();
    m_purgeTimer->stop();
    flushPendingUpdates();
    if (!m_pendingUpdates.isEmpty()) {
        qCWarning(lcStorage,
                  "%lld delivery updates could not be written before shutdown; those "
                  "messages will be delivered again after a restart",
                  qint64(m_pendingUpdates.size()));
    }
    if (m_inDoubt)
        qCWarning(lcStorage, "shutting down with an unconfirmed publish batch");
    closeConnection();
}

} // namespace cmq::storage
