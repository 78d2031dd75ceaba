#pragma once
// What became of one published message, as the publish coordinator decides it: the kind and,
// for a refusal, the names and numbers its reply needs. Handlers turn these into reply lines
// (handlers/publishreplies.cpp, protocol/replies.h); nothing upstream of them deals in text.

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
        QueueFull,     // a reject-publish queue at its length or byte limit: queue, limit, inBytes
        TooLarge,      // larger than a target queue's byte limit: queue, bytes, limit
        MemoryAlarm,   // over the broker's memory budget: held, limit, and bytes if doesNotFit
        StorageFailed, // the commit failed; `reason` says why (the database's text)
    };
    Kind kind = Kind::StorageFailed;
    QByteArray messageId{};
    QString reason{}; // StorageFailed: storage's own text
    QString queue{};  // QueueFull, TooLarge: the queue that refused it
    qint64 bytes = 0; // TooLarge, MemoryAlarm: the message's size
    qint64 limit = 0; // QueueFull: its length or byte limit; TooLarge: bytes; MemoryAlarm: budget
    qint64 held = 0;  // MemoryAlarm: the bytes the broker held when it refused
    bool inBytes = false;    // QueueFull: the byte limit is reached, not the length
    bool doesNotFit = false; // MemoryAlarm: the message does not fit (the alarm is not on)

    bool stored() const { return kind == Kind::Stored; }
};

using PublishOutcomes = QList<PublishOutcome>;

} // namespace cmq
