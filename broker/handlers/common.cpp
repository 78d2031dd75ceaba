#include "handlers/handlers.h"

#include "protocol/replies.h"

namespace cmq::handlers {

QByteArray errorLine(const Status &status)
{
    return protocol::reply::error(status.error().toUtf8());
}

} // namespace cmq::handlers
