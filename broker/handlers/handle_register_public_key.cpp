#include "handlers/handlers.h"
#include "protocol/replies.h"
#include "storage/storage.h"

namespace cmq::handlers {

void registerPublicKey(const HandlerContext &ctx, const Request &request, const Reply &reply)
{
    // Always stored under the caller's own CN: nobody can replace another client's key.
    const QByteArray &key = request.args.at(0);
    const auto decoded = QByteArray::fromBase64Encoding(key, QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || decoded.decoded.size() != 32) {
        return reply.send(protocol::reply::error(
            "Invalid public key: expected the base64 of a raw 32-byte X25519 key"));
    }
    ctx.services.storage.savePublicKey(ctx.session.identity().cn, key, [reply](Status status) {
        reply.send(status ? protocol::reply::publicKeyRegistered() : errorLine(status));
    });
}

} // namespace cmq::handlers
