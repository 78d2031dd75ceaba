#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void resend(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    const ClientIdentity &who = ctx.session.identity();
    ctx.services.router.resend(who.cn, bool(who.roles & Role::Admin), request.args.at(0),
                               [reply](Router::ResendOutcome outcome) {
                                   switch (outcome) {
                                   case Router::ResendOutcome::Requested:
                                       return reply.send(protocol::reply::resendRequested());
                                   case Router::ResendOutcome::Unauthorized:
                                       return reply.send(protocol::reply::unauthorizedResend());
                                   case Router::ResendOutcome::NotFound:
                                       return reply.send(protocol::reply::messageIdNotFound());
                                   }
                               });
}

} // namespace cmq::handlers
