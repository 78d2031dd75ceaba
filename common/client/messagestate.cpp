#include "client/messagestate.h"

namespace cmq::client {

QString stateName(MessageState state)
{
    switch (state) {
    case MessageState::Queued:
        return QStringLiteral("queued");
    case MessageState::Sent:
        return QStringLiteral("sent");
    case MessageState::WaitingForReceiver:
        return QStringLiteral("waiting-for-receiver");
    case MessageState::Delivered:
        return QStringLiteral("delivered");
    case MessageState::Failed:
        return QStringLiteral("failed");
    case MessageState::Cancelled:
        return QStringLiteral("cancelled");
    }
    return QStringLiteral("unknown");
}

} // namespace cmq::client
