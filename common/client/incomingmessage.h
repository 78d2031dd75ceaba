#pragma once
// A message as the application receives it: decrypted, with what the envelope says about it.

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QMetaType>
#include <QString>

namespace cmq::client {

enum class MessageKind {
    Message, // fire and forget
    Request, // the handler's return value is sent back to the requester
    Reply,   // answers one of our requests; handed to request()'s callback, not to listen()
};

// What the broker itself says about a delivery (its "Meta:" line, docs/PROTOCOL.md), never
// read from the envelope. A broker that predates delivery metadata tells only `redelivered`.
struct DeliveryFacts
{
    QString sender;        // the publisher's verified certificate CN; empty: not attested
    QDateTime publishedAt; // when the broker accepted the publish; invalid: not told
    bool redelivered = false;
    int deliveryCount = 0;    // this delivery included; 0: not told
    QString deadLetterReason; // why it was dead-lettered; empty for any other message
    // The rest of a dead letter's record; empty, invalid and 0 for any other message.
    QString deadLetterOriginalQueue; // the queue it was dead-lettered from
    QDateTime deadLetteredAt;        // when
    int deadLetterDeliveryCount = 0; // its deliveries in that queue without an ack
};

struct IncomingMessage
{
    QString messageId;
    // The sender as the message id names it ("{sender}-{uuid}-{receiver}"), or the reply_to of a
    // request: what the envelope claims. The envelope does not authenticate its sender; sender()
    // is the broker's attestation.
    QString from;
    QByteArray payload;
    MessageKind kind = MessageKind::Message;
    QString correlationId;   // requests and replies
    QDateTime sentTime;      // the envelope's own claim; invalid when it has none
    QJsonObject extraFields; // every non-standard envelope field, as received
    DeliveryFacts facts;

    // The CN of the certificate the message was published with, as the broker verified it;
    // empty when the broker does not attest senders (an older broker).
    const QString &sender() const { return facts.sender; }
    bool isAttested() const { return !facts.sender.isEmpty(); }
    const QDateTime &publishedAt() const { return facts.publishedAt; }
    bool redelivered() const { return facts.redelivered; } // delivered before without an ack
    int deliveryCount() const { return facts.deliveryCount; }
    const QString &deadLetterReason() const { return facts.deadLetterReason; }
    const QString &deadLetterOriginalQueue() const { return facts.deadLetterOriginalQueue; }
    const QDateTime &deadLetteredAt() const { return facts.deadLetteredAt; }
    int deadLetterDeliveryCount() const { return facts.deadLetterDeliveryCount; }
};

} // namespace cmq::client

Q_DECLARE_METATYPE(cmq::client::IncomingMessage)
