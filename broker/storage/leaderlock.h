#pragma once
// The database side of leadership (docs/STORAGE.md, "Leadership and fencing"): who may be the
// active node, and the cluster_leader row with its fencing epoch. PostgreSQL: a session-level
// advisory lock on a connection of its own, plus the epoch row that every write checks.
// SQLite (one machine): an exclusive flock() on "<database>.lock", which only the death of the
// holding process releases, plus the same row for what the admin interface reports.
// Used by LeaderElection on its thread only.

#include <memory>

#include <QDateTime>
#include <QString>

#include "config/config.h"
#include "util/result.h"

namespace cmq::storage {

struct LeaderRecord
{
    qint64 epoch = 0;
    QString nodeId;        // empty before the first takeover
    QString clientAddress; // where clients of the active node connect
    QDateTime since;
    bool leaseExpired = false; // not renewed within the lease (by the database's clock)
};

class LeaderLock
{
public:
    virtual ~LeaderLock() = default;

    // Connects (again, after a loss) and brings the schema up to date.
    virtual Status open() = 0;
    virtual bool isOpen() = 0;
    // Takes the lock, waiting up to `waitMs` for a holder that is letting go. False when
    // another node holds it; a failure when the database cannot be reached.
    virtual Result<bool> tryAcquire(int waitMs) = 0;
    // With the lock held: ends what a previous active left connected, then bumps the epoch and
    // records this node as the active one. The record returned holds the new epoch.
    virtual Result<LeaderRecord> takeOver(const QString &nodeId, const QString &clientAddress) = 0;
    // With the lock held: renews the lease of `epoch`. False when the epoch is no longer current.
    virtual Result<bool> renew(qint64 epoch) = 0;
    // The row as it is, for a standby: whom to send clients to, and whether the lease ran out.
    virtual Result<LeaderRecord> read(int leaseMs) = 0;
    // A lease ran out while the holder keeps the lock (a frozen process): end its lock session
    // so the lock can be taken. No-op where the lock cannot outlive its holder (SQLite).
    virtual void evictHolder() = 0;
    // Lets go of the lock and the connection (the lock goes with it).
    virtual void close() = 0;
};

// For the [database] driver; `connectionName` names its own QSqlDatabase connection.
std::unique_ptr<LeaderLock> makeLeaderLock(const Config::Database &settings,
                                           const QString &connectionName);

} // namespace cmq::storage
