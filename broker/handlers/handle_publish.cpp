#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/envelope.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void publish(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    const QByteArray &json = request.args.at(2);
    const Result<protocol::EnvelopeInfo> envelope = protocol::inspectEnvelope(json);
    if (!envelope)
        return reply.send(protocol::reply::invalidMessageFormat(envelope.error().toUtf8()));
    const QString exchange = QString::fromUtf8(request.args.at(0));
    const QString routingKey = QString::fromUtf8(request.args.at(1));
    ctx.services.router.publish(ctx.session.identity().cn, exchange, routingKey,
                                {Router::Publication{envelope->messageId, json, envelope->ttlMs}},
                                [reply, exchange, routingKey](const PublishOutcomes &outcomes) {
                                    sendPublishReplies(reply, outcomes, exchange, routingKey,
                                                       false);
                                });
}

} // namespace cmq::handlers
