#include "handlers/dispatcher.h"

#include "core/router.h"
#include "handlers/handlers.h"
#include "handlers/handlerslog.h"
#include "limits/ratelimiter.h"
#include "net/session.h"
#include "protocol/replies.h"

namespace cmq {

using protocol::Command;
using Handler = void (*)(const HandlerContext &, const protocol::Request &, const Reply &);

static Handler handlerFor(Command command)
{
    switch (command) {
    case Command::DeclareQueue:
        return handlers::declareQueue;
    case Command::DeclareExchange:
        return handlers::declareExchange;
    case Command::Bind:
        return handlers::bind;
    case Command::Publish:
        return handlers::publish;
    case Command::PublishBatch:
        return handlers::publishBatch;
    case Command::Consume:
        return handlers::consume;
    case Command::Fetch:
        return handlers::fetch;
    case Command::Ack:
        return handlers::ack;
    case Command::Nack:
        return handlers::nack;
    case Command::Resend:
        return handlers::resend;
    case Command::RegisterPublicKey:
        return handlers::registerPublicKey;
    case Command::GetPublicKey:
        return handlers::getPublicKey;
    case Command::Heartbeat:
        return handlers::heartbeat;
    case Command::Pong:
        return handlers::pong;
    case Command::Qos:
        return handlers::qos;
    case Command::QueuePolicy:
        return handlers::queuePolicy;
    case Command::Presence:
        return handlers::presence;
    case Command::Unknown:
        return nullptr;
    }
    return nullptr;
}

Dispatcher::Dispatcher(Services &services) : m_services(services)
{
}

void Dispatcher::checkParsed(protocol::ParseResult &parsed)
{
    if (parsed.status != protocol::ParseStatus::Ok ||
        parsed.request.command != Command::DeclareExchange)
        return;
    if (auto refused = handlers::unknownExchangeType(parsed.request)) {
        parsed = protocol::ParseResult{};
        parsed.status = protocol::ParseStatus::InvalidArgument;
        parsed.errorReply = std::move(*refused);
    }
}

void Dispatcher::dispatch(Session &session, const protocol::Request &request, const Reply &reply)
{
    const Handler handler = handlerFor(request.command);
    if (!handler)
        return reply.send(protocol::reply::unknownCommand());
    const ClientIdentity &who = session.identity();
    if (!AclManager::mayRun(who.roles, request.command)) {
        qCInfo(lcAcl, "%s (%s) denied %s", qPrintable(who.cn), qPrintable(rolesToString(who.roles)),
               protocol::commandName(request.command));
        return reply.send(
            handlers::refusalLine(AclManager::commandDenied(who.roles, request.command)));
    }
    if (m_services.rateLimiter && !exemptFromRateLimit(session, request)) {
        const int publishCost = request.command == Command::Publish ? 1 : 0;
        if (const auto refused =
                m_services.rateLimiter->admitRequest(who.cn, who.address, publishCost)) {
            const QByteArray text = handlers::refusalText(*refused);
            qCDebug(lcRateLimit, "%s: %s refused: %s", qPrintable(who.cn),
                    protocol::commandName(request.command), text.constData());
            return reply.send(protocol::reply::error(text));
        }
    }
    handler(HandlerContext{m_services, session}, request, reply);
}

void Dispatcher::refuseMalformed(Session &session, const QByteArray &errorLines, const Reply &reply)
{
    // Junk costs a request like anything else, or it could be sent faster than the client's rate.
    if (m_services.rateLimiter) {
        const ClientIdentity &who = session.identity();
        if (const auto refused = m_services.rateLimiter->admitRequest(who.cn, who.address, 0))
            return reply.send(protocol::reply::error(handlers::refusalText(*refused)));
    }
    reply.send(errorLines);
}

bool Dispatcher::exemptFromRateLimit(Session &session, const protocol::Request &request) const
{
    switch (request.command) {
    case Command::PublishBatch:
        // Limited by its handler, which knows how many messages it carries and must answer
        // one line per message.
        return true;
    case Command::Pong:
        // Answers the broker's own ping: refusing it would turn liveness into an error the
        // client cannot act on.
        return true;
    case Command::Ack:
    case Command::Nack:
        // Settling a delivery the broker chose to send frees its prefetch slot; a refused one
        // would hold that slot until ack_timeout_sec, and receivers that never read ack replies
        // would stall. Their number is bounded by what the broker delivered. An ack of nothing
        // awaiting one still pays, so it cannot be used to flood.
        return m_services.router.awaitsAck(&session, request.args.value(0));
    default:
        return false;
    }
}

bool Dispatcher::isConsuming(Session &session) const
{
    return m_services.router.isConsuming(&session);
}

} // namespace cmq
