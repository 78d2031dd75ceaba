#pragma once
// One handler per protocol command (docs/PROTOCOL.md). Each checks what is particular to its
// command (arguments, resource ownership), asks the router or storage, and completes `reply`
// exactly once, possibly later.

#include <optional>

#include "core/publishoutcome.h"
#include "core/services.h"
#include "handlers/refusalreplies.h"
#include "net/session.h"
#include "protocol/request.h"

namespace cmq::handlers {

using protocol::Request;

void declareQueue(const HandlerContext &ctx, const Request &request, const Reply &reply);
void declareExchange(const HandlerContext &ctx, const Request &request, const Reply &reply);
// declare_exchange with a type the registry does not know: the reply line ("Error: Invalid
// exchange type: expected direct, fanout or topic", the names in the registry's order), without
// its "\n" as the parser's error replies; null if the type is known or not given.
std::optional<QByteArray> unknownExchangeType(const Request &request);
void bind(const HandlerContext &ctx, const Request &request, const Reply &reply);
void publish(const HandlerContext &ctx, const Request &request, const Reply &reply);
void publishBatch(const HandlerContext &ctx, const Request &request, const Reply &reply);
void consume(const HandlerContext &ctx, const Request &request, const Reply &reply);
void fetch(const HandlerContext &ctx, const Request &request, const Reply &reply);
void ack(const HandlerContext &ctx, const Request &request, const Reply &reply);
void nack(const HandlerContext &ctx, const Request &request, const Reply &reply);
void resend(const HandlerContext &ctx, const Request &request, const Reply &reply);
void registerPublicKey(const HandlerContext &ctx, const Request &request, const Reply &reply);
void getPublicKey(const HandlerContext &ctx, const Request &request, const Reply &reply);
void heartbeat(const HandlerContext &ctx, const Request &request, const Reply &reply);
void pong(const HandlerContext &ctx, const Request &request, const Reply &reply);
void qos(const HandlerContext &ctx, const Request &request, const Reply &reply);
void presence(const HandlerContext &ctx, const Request &request, const Reply &reply);
void queuePolicy(const HandlerContext &ctx, const Request &request, const Reply &reply);

// The resource rules for a queue a command reads, fills or reconfigures: the caller's
// namespace (AclManager::mayUseQueue), then, if the queue exists, its owner
// (AclManager::mayUseOwnedQueue).
Verdict mayTouchQueue(const HandlerContext &ctx, const QString &queue);

// The reply lines of a publish (`batch` false: one message) or publish_batch: "ACK <id>" per
// stored message, an error line per refused one, in order.
QByteArray publishReplies(const PublishOutcomes &outcomes, const QString &exchange,
                          const QString &routingKey, bool batch);
// Completes `reply` with those lines and the number of messages stored.
void sendPublishReplies(const Reply &reply, const PublishOutcomes &outcomes,
                        const QString &exchange, const QString &routingKey, bool batch);

// "Error: <text>\n" from a failed storage Status (its text is the database's); a refusal's line
// is refusalLine() (handlers/refusalreplies.h).
QByteArray errorLine(const Status &status);

} // namespace cmq::handlers
