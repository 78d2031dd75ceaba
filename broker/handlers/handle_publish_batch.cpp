#include "core/router.h"
#include "handlers/handlers.h"
#include "limits/ratelimiter.h"
#include "protocol/envelope.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void publishBatch(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    const QByteArray &json = request.args.at(2);
    const Result<QList<QByteArrayView>> elements = protocol::splitJsonArray(json);
    if (!elements)
        return reply.send(protocol::reply::invalidBatchFormat(elements.error().toUtf8()));
    // All or nothing at parse level, as the original: one malformed element refuses the batch.
    QList<Router::Publication> messages;
    messages.reserve(elements->size());
    for (qsizetype i = 0; i < elements->size(); ++i) {
        const QByteArrayView element = elements->at(i);
        const Result<protocol::EnvelopeInfo> envelope = protocol::inspectEnvelope(element);
        if (!envelope) {
            return reply.send(protocol::reply::invalidBatchFormat(
                QByteArray("element ") + QByteArray::number(i) + ": " + envelope.error().toUtf8()));
        }
        messages.append(
            Router::Publication{envelope->messageId, element.toByteArray(), envelope->ttlMs});
    }
    if (messages.isEmpty())
        return reply.send("\n"); // the original answers an empty batch with an empty line
    // The rate-limit check the dispatcher leaves to us: the batch is N publishes, and a refusal
    // must still answer one line per message.
    if (limits::RateLimiter *limiter = ctx.services.rateLimiter) {
        const ClientIdentity &who = ctx.session.identity();
        if (const auto refused = limiter->admitRequest(who.cn, who.address, int(messages.size()))) {
            const QByteArray text = refusalText(*refused);
            QByteArray lines;
            for (const Router::Publication &m : std::as_const(messages))
                lines += protocol::reply::batchError(text, m.messageId);
            return reply.send(lines);
        }
    }
    const QString exchange = QString::fromUtf8(request.args.at(0));
    const QString routingKey = QString::fromUtf8(request.args.at(1));
    ctx.services.router.publish(ctx.session.identity().cn, exchange, routingKey,
                                std::move(messages),
                                [reply, exchange, routingKey](const PublishOutcomes &outcomes) {
                                    sendPublishReplies(reply, outcomes, exchange, routingKey, true);
                                });
}

} // namespace cmq::handlers
