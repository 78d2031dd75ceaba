#pragma once
// Which node of those sharing one database is active, decided and kept up on a thread of its
// own (a long publish transaction on the storage thread must not delay a lease renewal).
// A standby waits for the lock in slices of cluster.poll_ms and takes over the moment it is
// free, or once the active's lease has run out (then it ends the frozen holder's session
// first). The active renews its lease every poll_ms and steps down when the epoch is no longer
// its own or it could not renew for lease_ms. A node that stepped down stays down: the broker
// restarts as a fresh standby (docs/OPERATIONS.md, High availability).

#include <functional>
#include <memory>

#include <QDateTime>
#include <QElapsedTimer>
#include <QObject>

#include "config/config.h"
#include "util/result.h"

class QTimer;

namespace cmq::storage {

class LeaderLock;

struct ClusterStatus
{
    bool active = false;
    QString nodeId;        // this node
    qint64 epoch = 0;      // this node's while active, else the newest one seen
    QDateTime leaderSince; // when the active node took over
    QString activeNodeId;  // the active node as the database names it; empty when unknown
    QString activeAddress; // its cluster.client_address
    quint64 takeovers = 0; // times this process became active
    QString reason;        // why it last changed, for the log
};

class LeaderElection final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(LeaderElection)

public:
    // `onChange` is called on the election's thread with every change of role or active node.
    LeaderElection(const Config::Database &database, const Config::Cluster &cluster,
                   std::function<void(const ClusterStatus &)> onChange);
    ~LeaderElection() override;

    // Blocking: connects (retrying as [database] says), migrates, and makes one attempt, which
    // waits up to poll_ms for a lock being released. Then keeps going by itself.
    Result<ClusterStatus> start();
    // Lets go of the lock (after the storage's last commit) and stops.
    void stop();

private:
    void round();
    void standbyRound();
    void activeRound();
    void takeOver(const QString &how);
    void stepDown(const QString &reason);
    void scheduleRound(int delayMs);
    void changed(const QString &reason);

    const Config::Database m_database;
    const Config::Cluster m_cluster;
    const std::function<void(const ClusterStatus &)> m_onChange;
    std::unique_ptr<LeaderLock> m_lock;
    QTimer *m_timer;
    QElapsedTimer m_renewed; // started when the last successful renewal was sent
    ClusterStatus m_status;
    bool m_holdsLock = false;
    bool m_stopped = false;
    bool m_linkLost = false;
};

} // namespace cmq::storage
