#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void declareQueue(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    const ClientIdentity &who = ctx.session.identity();
    const QString queue = QString::fromUtf8(request.args.at(0));
    if (Verdict allowed = AclManager::mayUseQueue(who.roles, who.cn, queue); !allowed)
        return reply.send(refusalLine(allowed));
    ctx.services.router.declareQueue(queue, who.cn, [reply](Verdict status) {
        reply.send(status ? protocol::reply::queueDeclared() : refusalLine(status));
    });
}

} // namespace cmq::handlers
