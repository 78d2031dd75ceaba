#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

std::optional<QByteArray> unknownExchangeType(const Request &request)
{
    if (request.args.size() < 2 || findExchangeType(QString::fromUtf8(request.args.at(1))))
        return std::nullopt;
    QByteArray line =
        protocol::reply::error("Invalid exchange type: expected " + exchangeTypeNames().toUtf8());
    line.chop(1); // a parse error's reply, without its "\n"
    return line;
}

void declareExchange(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    // Any receiver may declare; an existing exchange is left as its creator made it and the
    // re-declaration with the same type succeeds (every existing receiver declares the shared
    // CipherMQ_exchange). No type is direct; an unknown one was refused before dispatch
    // (unknownExchangeType).
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
