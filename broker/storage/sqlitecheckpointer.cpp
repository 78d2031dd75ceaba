#include "sqlitecheckpointer.h"

#include <sys/resource.h>
#include <unistd.h>

#include <QFile>

#include "storagelog.h"

namespace cmq::storage {

std::unique_ptr<SqliteCheckpointer> SqliteCheckpointer::start(lite::Database *writer,
                                                              const QString &path)
{
    const lite::Api *api = lite::api();
    if (!api || !writer)
        return nullptr;
    lite::Database *own = nullptr;
    if (api->open(QFile::encodeName(path).constData(), &own, lite::OpenReadWrite, nullptr) !=
        lite::Ok) {
        qCWarning(lcStorage, "SQLite log checkpoints stay on the storage thread: %s",
                  own ? api->errmsg(own) : "cannot open a second connection");
        if (own)
            api->close(own);
        return nullptr;
    }
    // A new connection reads the file's header, which says WAL, only with its first statement;
    // until then a checkpoint on it does nothing.
    lite::Statement *statement = nullptr;
    const bool inWal =
        api->prepare(own, "PRAGMA journal_mode", -1, &statement, nullptr) == lite::Ok &&
        api->step(statement) == lite::Row && qstrcmp(api->columnText(statement, 0), "wal") == 0;
    api->finalize(statement);
    if (!inWal) {
        qCWarning(lcStorage, "SQLite log checkpoints stay on the storage thread: the second "
                             "connection does not see the log");
        api->close(own);
        return nullptr;
    }
    return std::unique_ptr<SqliteCheckpointer>(new SqliteCheckpointer(api, writer, own));
}

SqliteCheckpointer::SqliteCheckpointer(const lite::Api *api, lite::Database *writer,
                                       lite::Database *own)
    : m_api(api), m_writer(writer), m_own(own)
{
    m_thread = std::thread([this] { run(); });
    // Replaces the hook of wal_autocheckpoint (SQLite keeps one), whose bound committed() keeps.
    m_api->walHook(m_writer, &SqliteCheckpointer::committed, this);
}

SqliteCheckpointer::~SqliteCheckpointer()
{
    m_api->walAutocheckpoint(m_writer, WriterPages); // also removes committed() as the hook
    {
        const std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_one();
    m_thread.join();
    m_api->close(m_own);
}

int SqliteCheckpointer::committed(void *self, lite::Database *db, const char *schema, int pages)
{
    auto *checkpointer = static_cast<SqliteCheckpointer *>(self);
    if (pages >= WriterPages) {
        // What wal_autocheckpoint did; a checkpoint under way in the background makes this one
        // return at once (SQLITE_BUSY), which is fine: the log is being copied.
        checkpointer->m_api->walCheckpoint(db, schema, lite::CheckpointPassive, nullptr, nullptr);
    } else {
        // Once per BackgroundPages of new log: while the writer commits back to back, a
        // background checkpoint never finds the log still, so the log restarts only at the
        // writer's own checkpoint, which then has at most this much left to copy. A log that
        // restarted (shorter than at the last commit) starts the count again.
        if (pages < checkpointer->m_lastPages)
            checkpointer->m_nextRequestAt = BackgroundPages;
        checkpointer->m_lastPages = pages;
        if (pages >= checkpointer->m_nextRequestAt) {
            checkpointer->m_nextRequestAt = pages + BackgroundPages;
            {
                const std::lock_guard lock(checkpointer->m_mutex);
                checkpointer->m_requested = true;
            }
            checkpointer->m_wake.notify_one();
        }
    }
    return lite::Ok;
}

void SqliteCheckpointer::run()
{
    // Background work: on a machine whose cores are busy with the broker's own threads and the
    // database's, a checkpoint takes what they leave (a thread may lower its own priority).
    ::setpriority(PRIO_PROCESS, ::gettid(), BackgroundNice);
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [this] { return m_requested || m_stopping; });
        if (m_stopping)
            return;
        m_requested = false;
        lock.unlock();
        // PASSIVE: copies the pages no reader still needs and never waits for the writer, which
        // appends meanwhile; the log restarts from its beginning at the writer's next commit
        // once a checkpoint has copied all of it.
        m_api->walCheckpoint(m_own, "main", lite::CheckpointPassive, nullptr, nullptr);
        lock.lock();
    }
}

} // namespace cmq::storage
