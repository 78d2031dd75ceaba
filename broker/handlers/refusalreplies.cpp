#include "handlers/refusalreplies.h"

#include "protocol/replies.h"

namespace cmq::handlers {

namespace reply = protocol::reply;
using Kind = Refusal::Kind;

QByteArray refusalText(const Refusal &refusal)
{
    const QByteArray subject = refusal.subject.toUtf8();
    const QByteArray party = refusal.party.toUtf8();
    switch (refusal.kind) {
    case Kind::QueueNotFound:
        return reply::queueNotFoundText(subject);
    case Kind::ExchangeNotFound:
        return reply::exchangeNotFoundText(subject);
    case Kind::ExchangeTypeMismatch:
        return reply::exchangeTypeMismatchText(subject, party, refusal.other.toUtf8());
    case Kind::QueueQuotaReached:
        return reply::quotaReachedText("Queue", party, refusal.limit);
    case Kind::ExchangeQuotaReached:
        return reply::quotaReachedText("Exchange", party, refusal.limit);
    case Kind::BindingQuotaReached:
        return reply::quotaReachedText("Binding", party, refusal.limit);
    case Kind::NotAwaitingAck:
        return reply::notAwaitingAckText(subject);
    case Kind::ClosedBeforeSubscribe:
        return reply::closedBeforeSubscriptionText();
    case Kind::CommandDenied:
        return reply::commandDeniedText(subject, party);
    case Kind::QueueOutsideNamespace:
        return reply::queueOutsideNamespaceText(subject, party);
    case Kind::RoutingKeyOutsideNamespace:
        return reply::routingKeyOutsideNamespaceText(subject, party);
    case Kind::FanoutCreatorOnly:
        return reply::fanoutCreatorOnlyText(subject, party);
    case Kind::TopicPatternWildcard:
        return reply::topicPatternWildcardText(subject, party);
    case Kind::QueueOwnedByOther:
        return reply::queueOwnedByOtherText(subject, party);
    case Kind::DeadLetterNeedsPublish:
        return reply::deadLetterNeedsPublishText(party);
    case Kind::PresenceNotInGroup:
        return reply::presenceNotInGroupText(party);
    case Kind::StorageFailed:
        break;
    }
    return subject; // storage's own text, as the database gave it
}

QByteArray refusalLine(const Refusal &refusal)
{
    return reply::error(refusalText(refusal));
}

QByteArray refusalText(const limits::Refusal &refusal)
{
    const bool byCn = refusal.scope == limits::Scope::Cn;
    const QByteArray key = refusal.key.toUtf8();
    switch (refusal.kind) {
    case limits::Refusal::Kind::Rate:
        break;
    case limits::Refusal::Kind::Connections:
        return reply::tooManyConnectionsText(byCn, key, refusal.limit);
    }
    return reply::rateLimitExceededText(refusal.bucket == limits::BucketKind::Publish, byCn, key,
                                        refusal.rate, refusal.burst);
}

} // namespace cmq::handlers
