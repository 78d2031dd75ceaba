#pragma once
// The main thread's side of the leader election: runs storage::LeaderElection on a thread of
// its own and hands each change of role back here as a signal.

#include <QObject>

#include "config/config.h"
#include "storage/leaderelection.h"
#include "util/result.h"

class QThread;

namespace cmq {

class Leadership final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Leadership)

public:
    using Status = storage::ClusterStatus;

    Leadership(const Config::Database &database, const Config::Cluster &cluster,
               QObject *parent = nullptr);
    ~Leadership() override; // lets go of the lock, so a standby takes over at once

    // Blocking first round (see LeaderElection::start()).
    Result<Status> start();
    const Status &status() const { return m_status; }

Q_SIGNALS:
    void changed(const cmq::storage::ClusterStatus &status);

private:
    QThread *m_thread;
    storage::LeaderElection *m_election;
    Status m_status;
};

} // namespace cmq
