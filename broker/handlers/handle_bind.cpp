#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void bind(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    // Queue first, as the existing clients send it: bind <queue> <exchange> <routing_key>.
    const ClientIdentity &who = ctx.session.identity();
    const QString queue = QString::fromUtf8(request.args.at(0));
    const QString exchange = QString::fromUtf8(request.args.at(1));
    const QString routingKey = QString::fromUtf8(request.args.at(2));
    if (Verdict allowed = mayTouchQueue(ctx, queue); !allowed)
        return reply.send(refusalLine(allowed));
    if (Verdict allowed = AclManager::mayBindRoutingKey(who.roles, who.cn, routingKey); !allowed)
        return reply.send(refusalLine(allowed));
    const auto &exchanges = ctx.services.router.exchanges();
    if (const auto info = exchanges.constFind(exchange); info != exchanges.cend()) {
        if (Verdict allowed = AclManager::mayBindToExchange(who.roles, who.cn, exchange, info->type,
                                                            info->creator, routingKey);
            !allowed)
            return reply.send(refusalLine(allowed));
    }
    ctx.services.router.bind(queue, exchange, routingKey, [reply](Verdict status) {
        reply.send(status ? protocol::reply::queueBound() : refusalLine(status));
    });
}

} // namespace cmq::handlers
