#include "core/presence.h"
#include "handlers/handlers.h"
#include "net/session.h"
#include "protocol/replies.h"

namespace cmq::handlers {

// presence [on|off]: "Presence on" followed by a "Presence: <cn> online" line for each identity
// this one may see that is online now, then a line whenever one comes or goes; "Presence off"
// stops it. Only members of an acl.presence_groups group may subscribe.
void presence(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    Presence *hub = ctx.services.presence;
    if (!request.args.isEmpty() && request.args.at(0) == "off") {
        if (hub)
            hub->unsubscribe(ctx.session);
        return reply.send(protocol::reply::presenceOff());
    }
    const QString &cn = ctx.session.identity().cn;
    if (!hub || !hub->mayUse(cn))
        return reply.send(refusalLine(Refusal::of(Refusal::Kind::PresenceNotInGroup, {}, cn)));
    QByteArray lines = protocol::reply::presenceOn();
    for (const QString &online : hub->subscribe(ctx.session))
        lines += protocol::reply::presence(online.toUtf8(), true);
    reply.send(lines);
}

} // namespace cmq::handlers
