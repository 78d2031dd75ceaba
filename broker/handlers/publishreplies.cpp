#include <algorithm>

#include "core/publishoutcome.h"
#include "handlers/handlers.h"
#include "limits/memorybudget.h"
#include "protocol/replies.h"

namespace cmq::handlers {

namespace reply = protocol::reply;
using Kind = PublishOutcome::Kind;

// The text of a refused publish the coordinator judged by its limits, or storage's own.
static QByteArray refusalText(const PublishOutcome &outcome)
{
    const QByteArray &id = outcome.messageId;
    switch (outcome.kind) {
    case Kind::QueueFull:
        return reply::queueFullText(outcome.queue.toUtf8(), outcome.limit, outcome.inBytes, id);
    case Kind::TooLarge:
        return reply::exceedsQueueBytesText(id, outcome.bytes, outcome.queue.toUtf8(),
                                            outcome.limit);
    case Kind::MemoryAlarm: {
        const QByteArray held = limits::mebibytes(outcome.held).toUtf8();
        const QByteArray budget = limits::mebibytes(outcome.limit).toUtf8();
        return outcome.doesNotFit ? reply::exceedsMemoryBudgetText(id, outcome.bytes, held, budget)
                                  : reply::memoryAlarmText(held, budget, id);
    }
    case Kind::Stored:
    case Kind::Duplicate:
    case Kind::Unroutable:
    case Kind::StorageFailed:
        break;
    }
    return outcome.reason.toUtf8();
}

static QByteArray publishReply(const PublishOutcome &outcome, const QString &exchange,
                               const QString &routingKey, bool batch)
{
    const QByteArray &id = outcome.messageId;
    switch (outcome.kind) {
    case Kind::Stored:
        return reply::ack(id);
    case Kind::Duplicate:
        return batch ? reply::batchError(reply::duplicateMessageText(id), id)
                     : reply::duplicateMessage(id);
    case Kind::Unroutable: {
        const QByteArray e = exchange.toUtf8();
        const QByteArray rk = routingKey.toUtf8();
        return batch ? reply::batchError(reply::noQueuesBoundText(e, rk), id)
                     : reply::noQueuesBound(e, rk);
    }
    case Kind::QueueFull:
    case Kind::TooLarge:
    case Kind::MemoryAlarm:
    case Kind::StorageFailed:
        break;
    }
    const QByteArray text = refusalText(outcome);
    return batch ? reply::batchError(text, id) : reply::error(text);
}

QByteArray publishReplies(const PublishOutcomes &outcomes, const QString &exchange,
                          const QString &routingKey, bool batch)
{
    QByteArray lines;
    for (const PublishOutcome &outcome : outcomes)
        lines += publishReply(outcome, exchange, routingKey, batch);
    return lines;
}

void sendPublishReplies(const Reply &reply, const PublishOutcomes &outcomes,
                        const QString &exchange, const QString &routingKey, bool batch)
{
    const auto stored = std::count_if(outcomes.cbegin(), outcomes.cend(),
                                      [](const PublishOutcome &o) { return o.stored(); });
    reply.sendPublished(publishReplies(outcomes, exchange, routingKey, batch), quint64(stored));
}

} // namespace cmq::handlers
