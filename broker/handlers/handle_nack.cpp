#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void nack(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    // nack <id> [requeue|drop]; requeue is the default: losing a message takes asking.
    const QByteArray &messageId = request.args.at(0);
    const bool requeue = request.args.size() < 2 || request.args.at(1) != "drop";
    const Verdict status = ctx.services.router.nack(&ctx.session, messageId, requeue);
    reply.send(status ? protocol::reply::nackConfirmed(messageId) : refusalLine(status));
}

} // namespace cmq::handlers
