#include "backlogcounter.h"

#include <QElapsedTimer>
#include <QThread>

#include "backlogstore.h"
#include "connection.h"
#include "storagelog.h"

namespace cmq::storage {

namespace {

// A transaction whose snapshot is taken by its first read and kept to its end: REPEATABLE READ
// on PostgreSQL; on SQLite (WAL) every read transaction is one.
Status fixSnapshot(SqlSession &session)
{
    const bool postgres = session.dialect().isPostgres();
    Status st =
        session.exec(postgres ? QStringLiteral("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                              : QStringLiteral("BEGIN"));
    if (st)
        st = session.exec(QStringLiteral("SELECT 1 FROM queue_entries LIMIT 1"));
    return st;
}

} // namespace

Result<std::unique_ptr<BacklogCounter>> BacklogCounter::open(const Config::Database &settings,
                                                             const Dialect &dialect,
                                                             const QString &connectionName)
{
    using R = Result<std::unique_ptr<BacklogCounter>>;
    std::unique_ptr<BacklogCounter> counter(new BacklogCounter);
    BacklogCounter *self = counter.get();
    // A connection belongs to the thread that opened it: all of it happens on the counter's.
    counter->m_thread.reset(QThread::create([self, settings, &dialect, connectionName] {
        self->run(settings, dialect, connectionName);
    }));
    counter->m_thread->setObjectName(QStringLiteral("ciphermq-count"));
    counter->m_thread->start();
    std::unique_lock lock(counter->m_mutex);
    counter->m_changed.wait(lock, [self] { return self->m_snapshot.has_value(); });
    if (!*counter->m_snapshot) {
        const QString error = counter->m_snapshot->error();
        lock.unlock();
        return R::failure(error); // the thread ends by itself; the destructor joins it
    }
    lock.unlock();
    return counter;
}

BacklogCounter::~BacklogCounter()
{
    {
        const std::lock_guard lock(m_mutex);
        m_cancelled = true;
    }
    m_changed.notify_all();
    if (m_thread)
        m_thread->wait();
}

void BacklogCounter::start(Done done)
{
    {
        const std::lock_guard lock(m_mutex);
        if (m_started || m_cancelled)
            return;
        m_started = true;
        m_done = std::move(done);
    }
    m_changed.notify_all();
}

void BacklogCounter::run(const Config::Database &settings, const Dialect &dialect,
                         const QString &connectionName)
{
    SqlSession session;
    Status fixed = success();
    {
        // Scoped: QSqlDatabase copies rather than moves, so the Result keeps a handle to the
        // connection until it is destroyed, and closeSession() below would find it in use.
        Result<SqlSession> opened =
            openSession(settings, dialect, connectionName, QStringLiteral("ciphermq-broker"));
        if (opened)
            session = std::move(opened).value();
        else
            fixed = failure(opened.error());
    }
    if (fixed)
        fixed = fixSnapshot(session);
    Done done;
    {
        std::unique_lock lock(m_mutex);
        m_snapshot = fixed;
        m_changed.notify_all();
        if (fixed) {
            m_changed.wait(lock, [this] { return m_started || m_cancelled; });
            if (m_started)
                done = std::move(m_done);
        }
    }
    Result<QList<QueueBacklog>> counted = QList<QueueBacklog>{};
    if (done) {
        QElapsedTimer timer;
        timer.start();
        counted = countQueueEntries(session);
        if (counted)
            qCInfo(lcStorage, "queue backlogs counted in the background in %lld ms",
                   timer.elapsed());
    }
    if (session.database().isValid())
        (void)session.exec(QStringLiteral("ROLLBACK")); // read only: nothing to keep
    closeSession(session, connectionName);
    if (done)
        done(std::move(counted));
}

} // namespace cmq::storage
