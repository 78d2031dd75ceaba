#pragma once
// One message in a sender's outbox: what to publish and where, kept until the broker's ACK.

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QString>

#include "util/result.h"

namespace cmq::client {

struct OutboxEntry
{
    QString messageId;
    QString receiver; // receiver_client_id, whose public key seals the payload
    QString exchange;
    QString routingKey;
    // The sealed envelope JSON exactly as it is published (and re-published after a failure,
    // byte for byte). Empty while the receiver's public key is not known yet.
    QByteArray envelope;
    // The plaintext, kept only until it is sealed: a message may be sent before its receiver
    // ever registered a key. Cleared (and the entry saved again) as soon as it is sealed.
    QByteArray payload;
    QJsonObject extraFields; // envelope fields beyond the standard ones (request/reply)
    QDateTime createdAt;     // becomes the envelope's sent_time
    qint64 sequence = 0;     // outbox order; assigned by the Publisher

    bool isSealed() const { return !envelope.isEmpty(); }

    // One JSON object per entry (binary fields in base64), as the on-disk outbox stores it.
    QByteArray toJson() const;
    static Result<OutboxEntry> fromJson(const QByteArray &json);
};

} // namespace cmq::client
