#include "handlers/handlers.h"

#include "core/router.h"
#include "protocol/replies.h"

namespace cmq::handlers {

Verdict mayTouchQueue(const HandlerContext &ctx, const QString &queue)
{
    const ClientIdentity &who = ctx.session.identity();
    if (Verdict allowed = AclManager::mayUseQueue(who.roles, who.cn, queue); !allowed)
        return allowed;
    const Queue *existing = ctx.services.router.queues().value(queue);
    return existing ? AclManager::mayUseOwnedQueue(who.roles, who.cn, queue, existing->owner())
                    : accepted();
}

QByteArray errorLine(const Status &status)
{
    return protocol::reply::error(status.error().toUtf8());
}

} // namespace cmq::handlers
