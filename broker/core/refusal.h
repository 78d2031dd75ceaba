#pragma once
// What the topology, the delivery engine, dead-lettering and the ACL refuse, as values: which
// rule said no and the names and numbers the reply needs. Core never writes the sentence; the
// handlers and the admin commands turn a Refusal into its line (handlers/refusalreplies.h).

#include <utility>
#include <variant>

#include <QString>

#include "util/result.h"

namespace cmq {

struct Refusal
{
    enum class Kind {
        QueueNotFound,              // subject: the queue
        ExchangeNotFound,           // subject: the exchange
        ExchangeTypeMismatch,       // subject: the exchange, party: its type, other: the type asked
        QueueQuotaReached,          // party: the CN, limit
        ExchangeQuotaReached,       // party: the CN, limit
        BindingQuotaReached,        // party: the CN, limit
        NotAwaitingAck,             // subject: the message id
        ClosedBeforeSubscribe,      // the connection went before its consume's declare committed
        CommandDenied,              // subject: the command's name, party: the roles
        QueueOutsideNamespace,      // subject: the queue, party: the CN
        RoutingKeyOutsideNamespace, // subject: the routing key, party: the CN
        FanoutCreatorOnly,          // subject: the exchange, party: its creator
        TopicPatternWildcard,       // subject: the binding key, party: the CN
        QueueOwnedByOther,          // subject: the queue, party: its owner
        DeadLetterNeedsPublish,     // party: the roles
        PresenceNotInGroup,         // party: the CN
        StorageFailed,              // subject: storage's own reason
    };
    Kind kind = Kind::StorageFailed;
    QString subject;
    QString party;
    QString other;
    qint64 limit = 0;

    static Refusal of(Kind kind, QString subject = {}, QString party = {}, QString other = {},
                      qint64 limit = 0)
    {
        return Refusal{kind, std::move(subject), std::move(party), std::move(other), limit};
    }
    static Refusal queueNotFound(const QString &queue) { return of(Kind::QueueNotFound, queue); }
    static Refusal exchangeNotFound(const QString &exchange)
    {
        return of(Kind::ExchangeNotFound, exchange);
    }
    static Refusal storageFailed(const QString &reason) { return of(Kind::StorageFailed, reason); }
};

// A value or a Refusal: Result<T> for the calls whose failures are the broker's own rules.
template <typename T> class [[nodiscard]] Outcome
{
public:
    Outcome(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
    Outcome(Refusal refusal) : m_state(std::in_place_index<1>, std::move(refusal)) {}
    // Storage's failures keep storage's text (the database's), as StorageFailed.
    template <typename U> static Outcome refusedBy(const Result<U> &failed)
    {
        return Refusal::storageFailed(failed.error());
    }

    bool ok() const { return m_state.index() == 0; }
    explicit operator bool() const { return ok(); }
    const T &value() const { return std::get<0>(m_state); }
    const T *operator->() const { return &value(); }
    const Refusal &refusal() const { return std::get<1>(m_state); }

private:
    std::variant<T, Refusal> m_state;
};

// Success or a Refusal, for calls that return nothing on success.
using Verdict = Outcome<Ok>;
inline Verdict accepted()
{
    return Ok{};
}
// A storage Status as a Verdict.
inline Verdict verdictOf(const Status &status)
{
    return status ? accepted() : Verdict::refusedBy(status);
}

} // namespace cmq
