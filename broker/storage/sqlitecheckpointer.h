#pragma once
// SQLite's log checkpoints on a thread and connection of their own.
//
// In WAL mode SQLite copies the logged pages into the database file (a checkpoint) inside the
// commit that takes the log past `wal_autocheckpoint` pages, and syncs the file there: the
// storage thread, which is SQLite's one writer and the whole of W=256 on SQLite, did that work
// while every publisher waited for its ACK, and the commits that ran one had the 1,000 msg/s
// row's p99 (bench/README.md, "SQLite: checkpoints off the writer's thread"). Here the writer's
// commit hook only notes the log's length; every BackgroundPages of new log a thread with its
// own connection runs a PASSIVE checkpoint, which copies what it can without blocking the writer.
// WriterPages stays the bound: should the background fall behind (a reader holding old pages,
// say), the writer checkpoints itself as before, so the log cannot grow without limit.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include <QString>

#include "sqliteapi.h"

namespace cmq::storage {

class SqliteCheckpointer
{
    Q_DISABLE_COPY_MOVE(SqliteCheckpointer)

public:
    static constexpr int BackgroundPages = 5000; // 20 MB of log at 4 KB pages (2,500 cost
                                                 // 64 x W=1 throughput: bench/README.md)
    static constexpr int WriterPages = 10000;    // the writer's own bound, as before
    static constexpr int BackgroundNice = 10;    // the thread's priority: below the broker's

    // Takes over `writer`'s checkpoints (its connection to the database file at `path`). Null
    // when SQLite's API cannot be resolved or a second connection cannot be opened: the writer
    // then keeps checkpointing itself at WriterPages.
    static std::unique_ptr<SqliteCheckpointer> start(lite::Database *writer, const QString &path);
    // Hands the checkpoints back to the writer, which must still be open, and stops the thread.
    ~SqliteCheckpointer();

private:
    SqliteCheckpointer(const lite::Api *api, lite::Database *writer, lite::Database *own);
    // The writer's commit hook, on the writer's thread: `pages` is the log's length now.
    static int committed(void *self, lite::Database *db, const char *schema, int pages);
    void run();

    // The writer's thread only (committed()): when to ask for the next checkpoint.
    int m_lastPages = 0;
    int m_nextRequestAt = BackgroundPages;

    const lite::Api *const m_api;
    lite::Database *const m_writer;
    lite::Database *const m_own; // the background thread's connection
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_requested = false;
    bool m_stopping = false;
    std::thread m_thread;
};

} // namespace cmq::storage
