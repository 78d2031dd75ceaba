#include "leadership.h"

#include <optional>

#include <QThread>

namespace cmq {

Leadership::Leadership(const Config::Database &database, const Config::Cluster &cluster,
                       QObject *parent)
    : QObject(parent), m_thread(new QThread(this))
{
    m_status.nodeId = cluster.nodeId;
    m_election = new storage::LeaderElection(database, cluster, [this](const Status &status) {
        QMetaObject::invokeMethod(
            this,
            [this, status] {
                const bool roleChanged = status.active != m_status.active;
                m_status = status;
                if (roleChanged || !status.active)
                    Q_EMIT changed(m_status);
            },
            Qt::QueuedConnection);
    });
    m_election->moveToThread(m_thread);
    connect(m_thread, &QThread::finished, m_election, &QObject::deleteLater);
    m_thread->setObjectName(QStringLiteral("ciphermq-leader"));
    m_thread->start();
}

Leadership::~Leadership()
{
    QMetaObject::invokeMethod(
        m_election, [election = m_election] { election->stop(); }, Qt::BlockingQueuedConnection);
    m_thread->quit();
    m_thread->wait();
}

Result<Leadership::Status> Leadership::start()
{
    std::optional<Result<Status>> result;
    QMetaObject::invokeMethod(
        m_election, [&] { result = m_election->start(); }, Qt::BlockingQueuedConnection);
    if (!result)
        return Result<Status>::failure(QStringLiteral("the leader election did not run"));
    if (*result)
        m_status = result->value();
    return std::move(*result);
}

} // namespace cmq
