#include "core/deliveryengine.h"
#include "core/endpoint.h"
#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void fetch(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    // One message, if any; it awaits this connection's ack like a pushed delivery does.
    const QString queue = QString::fromUtf8(request.args.at(0));
    if (Verdict allowed = mayTouchQueue(ctx, queue); !allowed)
        return reply.send(refusalLine(allowed));
    const std::optional<ReadyMessage> fetched = ctx.services.router.fetch(&ctx.session, queue);
    if (!fetched)
        return reply.send(protocol::reply::noMessages());
    const bool withMeta = request.args.size() > 1; // "with-meta", the parser's only second word
    reply.send(deliveryLines(*fetched->message, nextDeliveryFacts(*fetched, withMeta)));
}

} // namespace cmq::handlers
