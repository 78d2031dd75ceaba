#pragma once
// Where a sender keeps messages between handing them over and the broker's ACK (Mail Pigeon's
// pluggable outbox). A new store implements these three calls; the Publisher does the rest.

#include <QList>
#include <QString>

#include "client/outboxentry.h"
#include "util/result.h"

namespace cmq::client {

class OutboxStore
{
public:
    virtual ~OutboxStore() = default;

    // Stores the entry, replacing one with the same message id. When this returns success the
    // entry must survive whatever the store promises to survive (the process, for a disk store).
    virtual Status save(const OutboxEntry &entry) = 0;
    // Every stored entry, in ascending sequence order.
    virtual Result<QList<OutboxEntry>> readAll() = 0;
    // Forgets the entry; removing an unknown id succeeds.
    virtual Status remove(const QString &messageId) = 0;
};

} // namespace cmq::client
