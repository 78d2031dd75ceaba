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

struct IncomingMessage
{
    QString messageId;
    // The sender as the message id names it ("{sender}-{uuid}-{receiver}"), or the reply_to of a
    // request. The envelope does not authenticate its sender: the broker vouches that the
    // publisher held a certificate of our CA, nothing more.
    QString from;
    QByteArray payload;
    MessageKind kind = MessageKind::Message;
    QString correlationId;    // requests and replies
    bool redelivered = false; // the broker delivered it before without an ack
    QDateTime sentTime;       // invalid when the envelope has none
    QJsonObject extraFields;  // every non-standard envelope field, as received
};

} // namespace cmq::client

Q_DECLARE_METATYPE(cmq::client::IncomingMessage)
