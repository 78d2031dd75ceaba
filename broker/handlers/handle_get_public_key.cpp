#include "handlers/handlers.h"
#include "protocol/replies.h"
#include "storage/storage.h"

namespace cmq::handlers {

void getPublicKey(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    const QString clientId = QString::fromUtf8(request.args.at(0));
    ctx.services.storage.loadPublicKey(
        clientId, [reply](const Result<std::optional<QByteArray>> &key) {
            if (!key)
                return reply.send(protocol::reply::error(key.error().toUtf8()));
            reply.send(key.value() ? protocol::reply::publicKey(*key.value())
                                   : protocol::reply::publicKeyNotFound());
        });
}

} // namespace cmq::handlers
