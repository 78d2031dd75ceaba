#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

static void subscribe(Router &router, Session *session, const QString &queue, bool withMeta,
                      const Reply &reply)
{
    const Verdict status = router.consume(session, queue, withMeta);
    reply.send(status ? protocol::reply::subscribed() : refusalLine(status));
}

void consume(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    // Consuming reads a queue's messages, so it is held to the same ownership rule as
    // declaring one: a receiver reads only its own queues.
    const ClientIdentity &who = ctx.session.identity();
    const QString queue = QString::fromUtf8(request.args.at(0));
    const bool withMeta = request.args.size() > 1; // "with-meta", the parser's only second word
    if (Verdict allowed = mayTouchQueue(ctx, queue); !allowed)
        return reply.send(refusalLine(allowed));
    Router &router = ctx.services.router;
    if (router.hasQueue(queue))
        return subscribe(router, &ctx.session, queue, withMeta, reply);
    // As the original, consuming a queue that does not exist yet declares it. The router
    // subscribes once the declare commits, and not at all if this connection closed meanwhile.
    router.declareAndConsume(
        &ctx.session, queue, who.cn,
        [reply](Verdict status) {
            reply.send(status ? protocol::reply::subscribed() : refusalLine(status));
        },
        withMeta);
}

} // namespace cmq::handlers
