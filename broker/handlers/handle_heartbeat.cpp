#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void heartbeat(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    // The parser has checked the range (1..3600 seconds).
    const int seconds = request.args.at(0).toInt();
    ctx.session.enableHeartbeat(seconds);
    reply.send(protocol::reply::heartbeatAccepted(seconds));
}

} // namespace cmq::handlers
