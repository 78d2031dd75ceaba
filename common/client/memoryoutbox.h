#pragma once
// An outbox in memory (Mail Pigeon's SimpleBox): survives reconnects and broker failover, not
// the sending process.

#include <QHash>
#include <QMap>

#include "client/outboxstore.h"

namespace cmq::client {

class MemoryOutbox final : public OutboxStore
{
public:
    Status save(const OutboxEntry &entry) override;
    Result<QList<OutboxEntry>> readAll() override;
    Status remove(const QString &messageId) override;

private:
    QMap<qint64, OutboxEntry> m_bySequence;
    QHash<QString, qint64> m_sequenceOf;
};

} // namespace cmq::client
