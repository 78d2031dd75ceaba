#include <algorithm>

#include "core/publishoutcome.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

namespace reply = protocol::reply;
using Kind = PublishOutcome::Kind;

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
    const QByteArray reason = outcome.reason.toUtf8();
    return batch ? reply::batchError(reason, id) : reply::error(reason);
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
