#pragma once
// What became of one published message, as the publish coordinator decides it. Handlers turn
// these into reply lines (protocol/replies.h); nothing upstream of them deals in text.

#include <QByteArray>
#include <QList>
#include <QString>

namespace cmq {

struct PublishOutcome
{
    enum class Kind {
        Stored,        // committed, or committed by an earlier publish of the same id in flight
        Duplicate,     // the id is already committed: nothing stored
        Unroutable,    // no queue bound to the exchange with the routing key
        QueueFull,     // a reject-publish queue at its length or byte limit
        TooLarge,      // larger than a target queue's byte limit
        MemoryAlarm,   // over the broker's memory budget (the alarm, or a message too large)
        StorageFailed, // the commit failed; `reason` says why
    };
    Kind kind = Kind::StorageFailed;
    QByteArray messageId;
    QString reason; // why it was refused, for QueueFull, TooLarge, MemoryAlarm, StorageFailed

    bool stored() const { return kind == Kind::Stored; }
};

using PublishOutcomes = QList<PublishOutcome>;

} // namespace cmq
