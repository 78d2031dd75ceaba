#include "protocol/replies.h"

#include <initializer_list>

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>

namespace cmq::protocol::reply {

namespace {

// Joins the parts and the "\n" with one allocation: "Message:" lines carry whole envelopes and
// are built for every delivery.
QByteArray line(std::initializer_list<QByteArrayView> parts)
{
    qsizetype size = 1;
    for (const QByteArrayView part : parts)
        size += part.size();
    QByteArray out;
    out.reserve(size);
    for (const QByteArrayView part : parts)
        out.append(part);
    out.append('\n');
    return out;
}

// A text without its "\n", to go inside an error line.
QByteArray textOf(std::initializer_list<QByteArrayView> parts)
{
    QByteArray out = line(parts);
    out.chop(1);
    return out;
}

} // namespace

QByteArray queuePolicySet()
{
    return QByteArrayLiteral("Queue policy set\n");
}

QByteArray queueDeclared()
{
    return QByteArrayLiteral("Queue declared\n");
}

QByteArray exchangeDeclared()
{
    return QByteArrayLiteral("Exchange declared\n");
}

QByteArray queueBound()
{
    return QByteArrayLiteral("Queue bound\n");
}

QByteArray ack(QByteArrayView messageId)
{
    return line({"ACK ", messageId});
}

QByteArray ackConfirmed(QByteArrayView id)
{
    return line({"ACK_CONFIRMED ", id});
}

QByteArray subscribed()
{
    return QByteArrayLiteral("Subscribed to queue\n");
}

QByteArray noMessages()
{
    return QByteArrayLiteral("No messages\n");
}

QByteArray message(QByteArrayView messageId, QByteArrayView envelopeJson)
{
    return line({"Message: ", messageId, " ", envelopeJson});
}

QByteArray resendRequested()
{
    return QByteArrayLiteral("Resend requested\n");
}

QByteArray unauthorizedResend()
{
    return QByteArrayLiteral("Unauthorized resend request\n");
}

QByteArray messageIdNotFound()
{
    return QByteArrayLiteral("Message ID not found\n");
}

QByteArray publicKeyRegistered()
{
    return QByteArrayLiteral("Public key registered\n");
}

QByteArray publicKey(QByteArrayView base64)
{
    return line({"Public key: ", base64});
}

QByteArray publicKeyNotFound()
{
    return QByteArrayLiteral("Public key not found\n");
}

QByteArray unknownCommand()
{
    return QByteArrayLiteral("Unknown command\n");
}

QByteArray error(QByteArrayView text)
{
    return line({"Error: ", text});
}

QByteArray batchError(QByteArrayView text, QByteArrayView messageId)
{
    return line({"Error: ", text, " for message ", messageId});
}

QByteArray invalidMessageFormat(QByteArrayView text)
{
    return line({"Invalid message format: ", text});
}

QByteArray invalidBatchFormat(QByteArrayView text)
{
    return line({"Invalid batch format: ", text});
}

QByteArray duplicateMessageText(QByteArrayView messageId)
{
    return textOf({"Duplicate message ", messageId, " ignored"});
}

QByteArray duplicateMessage(QByteArrayView messageId)
{
    return error(duplicateMessageText(messageId));
}

QByteArray noQueuesBoundText(QByteArrayView exchange, QByteArrayView routingKey)
{
    return textOf(
        {"No queues bound to exchange '", exchange, "' with routing key '", routingKey, "'"});
}

QByteArray noQueuesBound(QByteArrayView exchange, QByteArrayView routingKey)
{
    return error(noQueuesBoundText(exchange, routingKey));
}

QByteArray raw(QByteArrayView text)
{
    return line({text});
}

QByteArray queueFullText(QByteArrayView queue, qint64 limit, bool inBytes, QByteArrayView messageId)
{
    return textOf({"Queue '", queue, "' is full (", QByteArray::number(limit),
                   inBytes ? QByteArrayView(" bytes") : QByteArrayView(" messages"),
                   ", overflow reject-publish): message ", messageId, " rejected"});
}

QByteArray exceedsQueueBytesText(QByteArrayView messageId, qint64 bytes, QByteArrayView queue,
                                 qint64 limit)
{
    return textOf({"Message ", messageId, " of ", QByteArray::number(bytes),
                   " bytes exceeds queue '", queue, "' byte limit (", QByteArray::number(limit),
                   " bytes, performance.max_queue_bytes)"});
}

QByteArray memoryAlarmText(QByteArrayView heldMib, QByteArrayView budgetMib,
                           QByteArrayView messageId)
{
    return textOf({"Memory alarm: the broker holds ", heldMib, " MiB of its ", budgetMib,
                   " MiB budget (performance.memory_budget_mb): message ", messageId, " rejected"});
}

QByteArray exceedsMemoryBudgetText(QByteArrayView messageId, qint64 bytes, QByteArrayView heldMib,
                                   QByteArrayView budgetMib)
{
    return textOf({"Message ", messageId, " of ", QByteArray::number(bytes),
                   " bytes does not fit in the broker's memory budget (", heldMib, " MiB of ",
                   budgetMib, " MiB held, performance.memory_budget_mb)"});
}

QByteArray queueNotFoundText(QByteArrayView queue)
{
    return textOf({"Queue '", queue, "' not found"});
}

QByteArray exchangeNotFoundText(QByteArrayView exchange)
{
    return textOf({"Exchange '", exchange, "' not found"});
}

QByteArray exchangeTypeMismatchText(QByteArrayView exchange, QByteArrayView type,
                                    QByteArrayView asked)
{
    return textOf({"Exchange '", exchange, "' exists with type ", type, ", not ", asked});
}

QByteArray quotaReachedText(QByteArrayView noun, QByteArrayView cn, qint64 limit)
{
    return textOf({noun, " quota of '", cn, "' reached (", QByteArray::number(limit), " ",
                   noun.toByteArray().toLower(), "s)"});
}

QByteArray notAwaitingAckText(QByteArrayView messageId)
{
    return textOf({"Message ", messageId, " is not awaiting acknowledgement from this connection"});
}

QByteArray closedBeforeSubscriptionText()
{
    return QByteArrayLiteral("Connection closed before the subscription");
}

QByteArray commandDeniedText(QByteArrayView command, QByteArrayView roles)
{
    return textOf({"Permission denied: '", command, "' is not allowed for role ", roles});
}

QByteArray queueOutsideNamespaceText(QByteArrayView queue, QByteArrayView cn)
{
    return textOf({"Permission denied: queue '", queue, "' is outside the namespace of ", cn,
                   " (receivers use queues named '", cn, "_...')"});
}

QByteArray routingKeyOutsideNamespaceText(QByteArrayView routingKey, QByteArrayView cn)
{
    return textOf({"Permission denied: routing key '", routingKey, "' must be ", cn,
                   " or start with ", cn, "_"});
}

QByteArray fanoutCreatorOnlyText(QByteArrayView exchange, QByteArrayView creator)
{
    return textOf({"Permission denied: fanout exchange '", exchange,
                   "' takes bindings from its creator ", creator, " only"});
}

QByteArray topicPatternWildcardText(QByteArrayView bindingKey, QByteArrayView cn)
{
    return textOf({"Permission denied: topic pattern '", bindingKey,
                   "' must start with the literal words of ", cn});
}

QByteArray queueOwnedByOtherText(QByteArrayView queue, QByteArrayView owner)
{
    return textOf({"Permission denied: queue '", queue, "' belongs to ", owner});
}

QByteArray deadLetterNeedsPublishText(QByteArrayView roles)
{
    return textOf({"Permission denied: a dead-letter exchange publishes for the queue's owner, and "
                   "role ",
                   roles, " may not publish"});
}

QByteArray presenceNotInGroupText(QByteArrayView cn)
{
    return textOf({"Permission denied: ", cn,
                   " is in no acl.presence_groups group, so it may not see presence"});
}

QByteArray rateLimitExceededText(bool publish, bool byCn, QByteArrayView key, double rate,
                                 double burst)
{
    const QByteArray client = byCn ? textOf({"CN '", key, "'"}) : textOf({"IP ", key});
    return textOf({"rate limit exceeded: ", publish ? QByteArrayView("publish") : "request",
                   " rate of ", client, " is limited to ", QByteArray::number(rate, 'g', 10),
                   "/s (burst ", QByteArray::number(burst, 'g', 10), ")"});
}

QByteArray tooManyConnectionsText(bool byCn, QByteArrayView key, qint64 limit)
{
    return byCn ? textOf({"Too many connections for CN '", key, "' (limit ",
                          QByteArray::number(limit), ")"})
                : textOf({"Too many connections from ", key, " (limit ", QByteArray::number(limit),
                          ")"});
}

QByteArray ping()
{
    return QByteArrayLiteral("PING\n");
}

QByteArray heartbeatAccepted(int seconds)
{
    return line({"Heartbeat ", QByteArray::number(seconds)});
}

QByteArray shutdownNotice()
{
    return QByteArrayLiteral("Server shutting down\n");
}

QByteArray redelivered(QByteArrayView messageId)
{
    return line({"Redelivered: ", messageId});
}

QByteArray delivery(QByteArrayView messageId, QByteArrayView envelopeJson, bool redelivered)
{
    if (!redelivered)
        return message(messageId, envelopeJson);
    QByteArray lines = reply::redelivered(messageId);
    lines += message(messageId, envelopeJson);
    return lines;
}

QByteArray deliveryWithMeta(QByteArrayView messageId, QByteArrayView envelopeJson,
                            const DeliveryMeta &meta)
{
    // JSON, so a CN is escaped whatever it holds and later facts are new keys, not a new form.
    QJsonObject facts{
        {QStringLiteral("sender"), QString::fromUtf8(meta.sender)},
        {QStringLiteral("published_at"),
         QDateTime::fromMSecsSinceEpoch(meta.publishedAtMs, Qt::UTC).toString(Qt::ISODateWithMs)},
        {QStringLiteral("redelivered"), meta.redelivered},
        {QStringLiteral("delivery_count"), meta.deliveryCount},
    };
    if (!meta.deadLetterReason.isEmpty()) {
        // New keys only on dead letters: every other Meta line stays as it was.
        facts.insert(QStringLiteral("dead_letter_reason"),
                     QString::fromUtf8(meta.deadLetterReason));
        facts.insert(QStringLiteral("dead_letter_original_queue"),
                     QString::fromUtf8(meta.deadLetterOriginalQueue));
        facts.insert(QStringLiteral("dead_lettered_at"),
                     QDateTime::fromMSecsSinceEpoch(meta.deadLetteredAtMs, Qt::UTC)
                         .toString(Qt::ISODateWithMs));
        facts.insert(QStringLiteral("dead_letter_delivery_count"), meta.deadLetterDeliveryCount);
    }
    QByteArray lines =
        line({"Meta: ", messageId, " ", QJsonDocument(facts).toJson(QJsonDocument::Compact)});
    lines += message(messageId, envelopeJson);
    return lines;
}

QByteArray nackConfirmed(QByteArrayView messageId)
{
    return line({"NACK_CONFIRMED ", messageId});
}

QByteArray qosSet(int prefetch)
{
    return line({"Qos set to ", QByteArray::number(prefetch)});
}

QByteArray presenceOn()
{
    return line({"Presence on"});
}

QByteArray presenceOff()
{
    return line({"Presence off"});
}

QByteArray presence(QByteArrayView cn, bool online)
{
    return line(
        {"Presence: ", cn, online ? QByteArrayView(" online") : QByteArrayView(" offline")});
}

} // namespace cmq::protocol::reply
