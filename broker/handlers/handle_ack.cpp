#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void ack(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    // Only the connection the message was delivered to may ack it, and only that queue's
    // copy goes (the original removed it from every queue, for anyone).
    const QByteArray &messageId = request.args.at(0);
    const Verdict status = ctx.services.router.ack(&ctx.session, messageId);
    reply.send(status ? protocol::reply::ackConfirmed(messageId) : refusalLine(status));
}

} // namespace cmq::handlers
