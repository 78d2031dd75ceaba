#include "handlers/handlers.h"

namespace cmq::handlers {

void pong(const HandlerContext &, const Request &, const Reply &reply)
{
    // Any line proves the client alive; a pong needs no answer (that would be chatter).
    reply.send({});
}

} // namespace cmq::handlers
