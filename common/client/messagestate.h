#pragma once
// The states of an outgoing message (Mail Pigeon's queue / send_queue / send_waiting_queue),
// reported through Client::messageStateChanged.

#include <QMetaType>
#include <QString>

namespace cmq::client {

enum class MessageState {
    Queued,             // in the outbox, waiting for a connection or its turn in the window
    Sent,               // written to the broker, waiting for its ACK
    WaitingForReceiver, // the receiver has no public key or no bound queue yet: retried later
    Delivered,          // the broker stored it durably (ACK): it reaches the receiver's queue
    Failed,             // refused for good (malformed, not permitted): removed from the outbox
    Cancelled,          // withdrawn before the broker took it (a request that timed out)
};

QString stateName(MessageState state);

} // namespace cmq::client

Q_DECLARE_METATYPE(cmq::client::MessageState)
