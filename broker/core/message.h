#pragma once
// A published message as the router holds it: the publisher's exact envelope bytes plus the
// routing facts. Shared (not copied) between every queue it was routed to.

#include <memory>

#include <QByteArray>
#include <QDateTime>
#include <QString>

namespace cmq {

struct Message
{
    QByteArray id;
    QString sender; // publisher CN
    QString exchange;
    QString routingKey;
    QByteArray envelope; // ciphertext envelope JSON, never re-encoded
    QDateTime sentTime;
    qint64 ttlMs = 0; // the envelope's own "ttl_ms"; 0 = none
};

using MessagePtr = std::shared_ptr<const Message>;

} // namespace cmq
