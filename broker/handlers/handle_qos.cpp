#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void qos(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    // qos <n>: at most n unacknowledged deliveries to this connection per queue; 0 = no limit.
    const int prefetch = request.args.at(0).toInt();
    ctx.services.router.setPrefetch(&ctx.session, prefetch);
    reply.send(protocol::reply::qosSet(prefetch));
}

} // namespace cmq::handlers
