#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

void declareExchange(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    // Any receiver may declare; an existing exchange is left as its creator made it and the
    // re-declaration with the same type succeeds (every existing receiver declares the shared
    // CipherMQ_exchange). No type is direct; the parser let only known types through.
    const QString exchange = QString::fromUtf8(request.args.at(0));
    const ExchangeType *type = request.args.size() > 1
                                   ? findExchangeType(QString::fromUtf8(request.args.at(1)))
                                   : &defaultExchangeType();
    if (!type)
        type = &defaultExchangeType();
    ctx.services.router.declareExchange(
        exchange, ctx.session.identity().cn,
        [reply](Verdict status) {
            reply.send(status ? protocol::reply::exchangeDeclared() : refusalLine(status));
        },
        *type);
}

} // namespace cmq::handlers
