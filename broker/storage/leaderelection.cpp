#include "leaderelection.h"

#include <QThread>
#include <QTimer>

#include "leaderlock.h"
#include "storagelog.h"

namespace cmq::storage {

LeaderElection::LeaderElection(const Config::Database &database, const Config::Cluster &cluster,
                               std::function<void(const ClusterStatus &)> onChange)
    : m_database(database), m_cluster(cluster), m_onChange(std::move(onChange)),
      m_lock(makeLeaderLock(database, QStringLiteral("ciphermq-leader"))), m_timer(new QTimer(this))
{
    m_status.nodeId = cluster.nodeId;
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, &LeaderElection::round);
}

LeaderElection::~LeaderElection()
{
    stop();
}

Result<ClusterStatus> LeaderElection::start()
{
    const int attempts = qMax(1, m_database.connectAttempts);
    for (int attempt = 1;; ++attempt) {
        const Status opened = m_lock->open();
        if (opened)
            break;
        qCWarning(lcStorage, "leader election: connection attempt %d of %d failed: %s", attempt,
                  attempts, qUtf8Printable(opened.error()));
        if (attempt >= attempts)
            return Result<ClusterStatus>::failure(opened.error());
        QThread::msleep(qMax(0, m_database.connectRetryDelayMs)); // start-up only
    }
    standbyRound();
    if (!m_status.active)
        qCInfo(lcStorage, "standby: node %s is active (epoch %lld, %s)",
               qUtf8Printable(m_status.activeNodeId), m_status.epoch,
               qUtf8Printable(m_status.activeAddress));
    return m_status;
}

void LeaderElection::stop()
{
    if (m_stopped)
        return;
    m_stopped = true;
    m_timer->stop();
    m_lock->close();
    m_holdsLock = false;
}

void LeaderElection::scheduleRound(int delayMs)
{
    if (!m_stopped)
        m_timer->start(qMax(0, delayMs));
}

void LeaderElection::round()
{
    if (m_stopped)
        return;
    if (m_status.active)
        activeRound();
    else
        standbyRound();
}

void LeaderElection::standbyRound()
{
    QElapsedTimer elapsed;
    elapsed.start();
    if (!m_lock->isOpen() || m_linkLost) {
        if (const Status st = m_lock->open(); !st) {
            qCWarning(lcStorage).noquote() << "leader election: cannot reconnect:" << st.error();
            return scheduleRound(m_cluster.pollMs);
        }
        m_linkLost = false;
    }
    if (!m_holdsLock) {
        const Result<bool> taken = m_lock->tryAcquire(m_cluster.pollMs);
        if (!taken) {
            qCWarning(lcStorage).noquote() << "leader election:" << taken.error();
            m_linkLost = true;
            return scheduleRound(m_cluster.pollMs);
        }
        m_holdsLock = taken.value();
    }
    if (m_holdsLock)
        return takeOver(QStringLiteral("the leadership lock was free"));

    const Result<LeaderRecord> leader = m_lock->read(m_cluster.leaseMs);
    if (leader) {
        const bool moved =
            leader->epoch != m_status.epoch || leader->clientAddress != m_status.activeAddress;
        m_status.epoch = leader->epoch;
        m_status.leaderSince = leader->since;
        m_status.activeNodeId = leader->nodeId;
        m_status.activeAddress = leader->clientAddress;
        if (moved)
            changed(QStringLiteral("node %1 is active").arg(leader->nodeId));
        if (leader->leaseExpired && !leader->nodeId.isEmpty()) {
            // The holder keeps its lock session but stopped renewing: frozen, or cut off from
            // its storage. Its epoch ends with our takeover, so its writes cannot commit.
            qCWarning(lcStorage, "the lease of node %s (epoch %lld) ran out; taking the lock",
                      qUtf8Printable(leader->nodeId), leader->epoch);
            m_lock->evictHolder();
            return scheduleRound(0);
        }
    }
    scheduleRound(m_cluster.pollMs - int(elapsed.elapsed()));
}

void LeaderElection::takeOver(const QString &how)
{
    QElapsedTimer started;
    started.start();
    const Result<LeaderRecord> record = m_lock->takeOver(m_cluster.nodeId, m_cluster.clientAddress);
    if (!record) {
        qCWarning(lcStorage).noquote() << "takeover failed, trying again:" << record.error();
        if (!m_lock->isOpen()) {
            m_holdsLock = false;
            m_linkLost = true;
        }
        return scheduleRound(m_cluster.pollMs);
    }
    m_renewed = started;
    m_status.active = true;
    m_status.epoch = record->epoch;
    m_status.leaderSince = record->since;
    m_status.activeNodeId = m_cluster.nodeId;
    m_status.activeAddress = m_cluster.clientAddress;
    ++m_status.takeovers;
    qCInfo(lcStorage, "node %s is active with epoch %lld (%s)", qUtf8Printable(m_cluster.nodeId),
           record->epoch, qUtf8Printable(how));
    changed(QStringLiteral("took over with epoch %1").arg(record->epoch));
    scheduleRound(m_cluster.pollMs);
}

void LeaderElection::activeRound()
{
    // Measured on this process's clock from before the last renewal was sent, so it runs out
    // no later than the lease the others see in the database.
    if (m_renewed.elapsed() > m_cluster.leaseMs)
        return stepDown(
            QStringLiteral("the lease was not renewed for %1 ms").arg(m_renewed.elapsed()));
    QElapsedTimer sent;
    sent.start();
    if (m_linkLost) {
        // A new connection holds no lock: take it again, if nobody else has.
        const Status opened = m_lock->open();
        const Result<bool> taken =
            opened ? m_lock->tryAcquire(0) : Result<bool>::failure(opened.error());
        if (taken && !taken.value())
            return stepDown(QStringLiteral("another node holds the leadership lock"));
        if (!taken)
            return scheduleRound(m_cluster.pollMs / 2);
        m_linkLost = false;
    }
    const Result<bool> renewed = m_lock->renew(m_status.epoch);
    if (!renewed) {
        qCWarning(lcStorage).noquote() << "cannot renew the lease:" << renewed.error();
        m_linkLost = true;
        return scheduleRound(m_cluster.pollMs / 2);
    }
    if (!renewed.value())
        return stepDown(QStringLiteral("epoch %1 is no longer current").arg(m_status.epoch));
    m_renewed = sent;
    scheduleRound(m_cluster.pollMs);
}

void LeaderElection::stepDown(const QString &reason)
{
    qCWarning(lcStorage, "stepping down: %s", qUtf8Printable(reason));
    stop();
    m_status.active = false;
    m_status.activeNodeId.clear();
    m_status.activeAddress.clear();
    changed(QStringLiteral("stepped down: %1").arg(reason));
}

void LeaderElection::changed(const QString &reason)
{
    m_status.reason = reason;
    if (m_onChange)
        m_onChange(m_status);
}

} // namespace cmq::storage
