#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void queuePolicy(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    // queue_policy <queue> <max_length> <drop-head|reject-publish> [<message_ttl_ms>]: the
    // queue's own limit, in place of the configured default it got when it was declared, and
    // its message TTL (left as it is when not given). Same resource rule as
    // declaring it: a receiver sets it on its own queues only.
    const QString queue = QString::fromUtf8(request.args.at(0));
    if (Status allowed = mayTouchQueue(ctx, queue); !allowed)
        return reply.send(errorLine(allowed));
    const qint64 maxLength = request.args.at(1).toLongLong();
    const QString overflow = QString::fromUtf8(request.args.at(2));
    const qint64 messageTtlMs = request.args.size() > 3 ? request.args.at(3).toLongLong() : -1;
    ctx.services.router.setQueuePolicy(
        queue, maxLength, overflow,
        [reply](Status status) {
            reply.send(status ? protocol::reply::queuePolicySet() : errorLine(status));
        },
        messageTtlMs);
}

} // namespace cmq::handlers
