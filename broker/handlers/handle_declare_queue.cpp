#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void declareQueue(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    const ClientIdentity &who = ctx.session.identity();
    const QString queue = QString::fromUtf8(request.args.at(0));
    if (Status allowed = AclManager::mayUseQueue(who.roles, who.cn, queue); !allowed)
        return reply.send(errorLine(allowed));
    ctx.services.router.declareQueue(queue, who.cn, [reply](Status status) {
        reply.send(status ? protocol::reply::queueDeclared() : errorLine(status));
    });
}

} // namespace cmq::handlers
