#include "client/requesttracker.h"

namespace cmq::client {

RequestTracker::RequestTracker(QObject *parent) : QObject(parent)
{
}

RequestTracker::~RequestTracker() = default;

void RequestTracker::add(const QString &correlationId, const QString &messageId,
                         const QString &receiver, int timeoutMs, Callback callback)
{
    auto pending = std::make_shared<Pending>();
    pending->messageId = messageId;
    pending->receiver = receiver;
    pending->callback = std::move(callback);
    pending->timer = std::make_unique<QTimer>();
    pending->timer->setSingleShot(true);
    // A coarse timer may fire 5 % early; a timeout is a promise to wait at least that long.
    pending->timer->setTimerType(Qt::PreciseTimer);
    connect(
        pending->timer.get(), &QTimer::timeout, this,
        [this, correlationId, messageId, receiver, timeoutMs] {
            complete(
                correlationId,
                Result<QByteArray>::failure(
                    QStringLiteral("no reply from %1 within %2 ms").arg(receiver).arg(timeoutMs)));
            Q_EMIT timedOut(messageId);
        });
    pending->timer->start(qMax(0, timeoutMs));
    m_pending.insert(correlationId, std::move(pending));
}

RequestTracker::Resolution RequestTracker::resolve(const QString &correlationId,
                                                   const QByteArray &payload, const QString &sender)
{
    const auto it = m_pending.constFind(correlationId);
    if (it == m_pending.cend())
        return Resolution::Unknown;
    if (!sender.isEmpty() && sender != (*it)->receiver)
        return Resolution::WrongSender;
    complete(correlationId, payload);
    return Resolution::Resolved;
}

void RequestTracker::failByMessageId(const QString &messageId, const QString &error)
{
    for (auto it = m_pending.cbegin(); it != m_pending.cend(); ++it) {
        if ((*it)->messageId == messageId) {
            complete(it.key(), Result<QByteArray>::failure(error));
            return;
        }
    }
}

void RequestTracker::complete(const QString &correlationId, const Result<QByteArray> &result)
{
    // Taken out first: the callback may start another request or even end the event loop.
    const std::shared_ptr<Pending> pending = m_pending.take(correlationId);
    if (!pending)
        return;
    pending->timer->stop();
    // The timer may be the one whose timeout is running right now.
    pending->timer.release()->deleteLater();
    if (pending->callback)
        pending->callback(result);
}

} // namespace cmq::client
