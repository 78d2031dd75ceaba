#include "core/router.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"

namespace cmq::handlers {

namespace {

// The dead-letter options of the parsed request ("dlx=...", after the TTL if there is one).
DeadLetterPolicyChange deadLetterChange(const Request &request)
{
    DeadLetterPolicyChange change;
    for (qsizetype i = 3; i < request.args.size(); ++i) {
        const QByteArray &option = request.args.at(i);
        const qsizetype eq = option.indexOf('=');
        if (eq < 0)
            continue; // the TTL
        const QByteArray name = option.left(eq);
        const QString value = QString::fromUtf8(option.mid(eq + 1));
        if (name == "dlx")
            change.exchange = value;
        else if (name == "dlx_key")
            change.routingKey = value;
        else if (name == "delivery_limit")
            change.deliveryLimit = value.toLongLong();
        else if (name == "dead_letter_overflow")
            change.onOverflow = value == QLatin1String("on");
    }
    return change;
}

// Dead letters are published to the dead-letter exchange on the queue owner's behalf, with
// the original sender's envelope: a CN that may not publish could otherwise forward what it
// received into other services' queues. So a receiver that names one must also hold the
// publish right; admins may set one on any queue (docs/ACL.md, "Dead-lettering").
Verdict mayNameDeadLetterExchange(const HandlerContext &ctx)
{
    const ClientIdentity &who = ctx.session.identity();
    if (who.roles.testFlag(Role::Admin) ||
        AclManager::mayRun(who.roles, protocol::Command::Publish))
        return accepted();
    return Refusal::of(Refusal::Kind::DeadLetterNeedsPublish, {}, rolesToString(who.roles));
}

} // namespace

void queuePolicy(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    // queue_policy <queue> <max_length> <drop-head|reject-publish> [<message_ttl_ms>]
    // [dlx=<exchange>] [dlx_key=<key>] [delivery_limit=<n>] [dead_letter_overflow=on|off]: the
    // queue's own limit, in place of the configured default it got when it was declared, its
    // message TTL and dead-letter settings (each left as it is when not given). Same resource
    // rule as declaring it: a receiver sets it on its own queues only.
    const QString queue = QString::fromUtf8(request.args.at(0));
    if (Verdict allowed = mayTouchQueue(ctx, queue); !allowed)
        return reply.send(refusalLine(allowed));
    const qint64 maxLength = request.args.at(1).toLongLong();
    const QString overflow = QString::fromUtf8(request.args.at(2));
    const qint64 messageTtlMs = request.args.size() > 3 && !request.args.at(3).contains('=')
                                    ? request.args.at(3).toLongLong()
                                    : -1;
    const DeadLetterPolicyChange deadLetter = deadLetterChange(request);
    if (deadLetter.exchange && !deadLetter.exchange->isEmpty()) {
        if (Verdict allowed = mayNameDeadLetterExchange(ctx); !allowed)
            return reply.send(refusalLine(allowed));
    }
    ctx.services.router.setQueuePolicy(
        queue, maxLength, overflow,
        [reply](Verdict status) {
            reply.send(status ? protocol::reply::queuePolicySet() : refusalLine(status));
        },
        messageTtlMs, deadLetter);
}

} // namespace cmq::handlers
