#pragma once
// Counts every queue's entries after start-up, so that start-up does not wait for it: on a
// connection and thread of its own, in a snapshot fixed before the broker serves (after the
// migrations, before the heads are read), so the count is of exactly what the database held at
// start. The core adds it to what it has seen since (docs/STORAGE.md, "Recovery at start-up").

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include <QList>
#include <QString>

#include "config/config.h"
#include "dialect.h"
#include "storage.h"
#include "util/result.h"

class QThread;

namespace cmq::storage {

class BacklogCounter
{
    Q_DISABLE_COPY_MOVE(BacklogCounter)

public:
    using Done = std::function<void(Result<QList<QueueBacklog>>)>;

    // Opens the connection and fixes the snapshot; blocks until then (start-up only).
    static Result<std::unique_ptr<BacklogCounter>>
    open(const Config::Database &settings, const Dialect &dialect, const QString &connectionName);
    // A count not started yet is called off; a running one is waited for (it reads only the
    // (queue, id) index: about 0.6 s per million entries on the project's machine).
    ~BacklogCounter();

    // Counts on the counter's thread and calls `done` there, once; then the connection closes.
    void start(Done done);

private:
    BacklogCounter() = default;
    void run(const Config::Database &settings, const Dialect &dialect,
             const QString &connectionName);

    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::optional<Status> m_snapshot; // set once the snapshot is fixed, or failed to be
    bool m_started = false;
    bool m_cancelled = false;
    Done m_done;
    std::unique_ptr<QThread> m_thread;
};

} // namespace cmq::storage
