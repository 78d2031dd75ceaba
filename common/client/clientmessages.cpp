// Client: the message-level calls (send, publishEnvelope, request, and what a delivery is
// handed to), beside client.cpp, which keeps the connection and its topology steps.

#include "client/client.h"

#include <QJsonDocument>
#include <QJsonObject>

#include "client/clientlog.h"
#include "client/messageid.h"
#include "client/publisher.h"
#include "client/requesttracker.h"
#include "client/subscriber.h"
#include "crypto/envelopecrypto.h"
#include "protocol/request.h"

namespace cmq::client {

namespace {

bool isValidName(const QString &name)
{
    return protocol::isValidName(name.toUtf8());
}

} // namespace

Result<QString> Client::send(const QString &to, const QByteArray &payload,
                             const SendOptions &options)
{
    using R = Result<QString>;
    if (!m_started)
        return R::failure(QStringLiteral("the client is not started"));
    if (!isValidName(to))
        return R::failure(QStringLiteral("'%1' is not a valid client name").arg(to));
    OutboxEntry entry;
    entry.messageId = options.messageId.isEmpty() ? makeMessageId(m_name, newCorrelationId(), to)
                                                  : options.messageId;
    if (!isValidName(entry.messageId))
        return R::failure(QStringLiteral("'%1' is not a valid message id").arg(entry.messageId));
    entry.receiver = to;
    entry.exchange = m_options.conventions.exchange;
    entry.routingKey = m_options.conventions.routingKeyFor(to);
    entry.payload = payload;
    entry.extraFields = options.extraFields;
    entry.createdAt = QDateTime::currentDateTimeUtc();
    const QString id = entry.messageId;
    if (const Status queued = m_publisher->enqueue(std::move(entry)); !queued)
        return R::failure(queued.error());
    return id;
}

Result<QString> Client::publishEnvelope(const QString &exchange, const QString &routingKey,
                                        const QByteArray &envelopeJson)
{
    using R = Result<QString>;
    if (!m_started)
        return R::failure(QStringLiteral("the client is not started"));
    if (!isValidName(exchange) || !isValidName(routingKey))
        return R::failure(QStringLiteral("invalid exchange or routing key"));
    const auto parsed = crypto::parseEnvelopeJson(envelopeJson);
    if (!parsed)
        return R::failure(QStringLiteral("not an envelope: %1").arg(parsed.error()));
    if (!isValidName(parsed->messageId))
        return R::failure(QStringLiteral("'%1' is not a valid message id").arg(parsed->messageId));
    OutboxEntry entry;
    entry.messageId = parsed->messageId;
    entry.receiver = parsed->receiverClientId;
    entry.exchange = exchange;
    entry.routingKey = routingKey;
    // One line on the wire: a pretty-printed file is compacted, other bytes are kept.
    entry.envelope = envelopeJson.trimmed();
    if (entry.envelope.contains('\n'))
        entry.envelope = QJsonDocument::fromJson(entry.envelope).toJson(QJsonDocument::Compact);
    entry.createdAt = QDateTime::currentDateTimeUtc();
    const QString id = entry.messageId;
    if (const Status queued = m_publisher->enqueue(std::move(entry)); !queued)
        return R::failure(queued.error());
    return id;
}

Result<QString> Client::request(const QString &to, const QByteArray &payload, int timeoutMs,
                                RequestCallback done)
{
    using R = Result<QString>;
    if (!m_started)
        return R::failure(QStringLiteral("the client is not started"));
    if (const Status listening = ensureListening(); !listening)
        return R::failure(listening.error());
    const QString correlationId = newCorrelationId();
    SendOptions options;
    options.messageId = makeMessageId(m_name, correlationId, to);
    options.extraFields = QJsonObject{{QStringLiteral("kind"), QStringLiteral("request")},
                                      {QStringLiteral("correlation_id"), correlationId},
                                      {QStringLiteral("reply_to"), m_name}};
    // Registered first: a reply can only come after the send, but the send may fail at once.
    m_requests->add(correlationId, options.messageId, to, timeoutMs, std::move(done));
    auto sent = send(to, payload, options);
    if (!sent) {
        m_requests->failByMessageId(options.messageId, sent.error());
        return sent;
    }
    return sent;
}

void Client::deliver(const IncomingMessage &message)
{
    switch (message.kind) {
    case MessageKind::Reply:
        switch (m_requests->resolve(message.correlationId, message.payload, message.sender())) {
        case RequestTracker::Resolution::Resolved:
            break;
        case RequestTracker::Resolution::Unknown:
            qCInfo(lcClient, "%s: reply %s came after its request ended; dropped",
                   qPrintable(m_name), qPrintable(message.messageId));
            break;
        case RequestTracker::Resolution::WrongSender:
            // Anyone may publish to our queue; only the service we asked may answer.
            qCWarning(lcClient, "%s: reply %s comes from %s, not from the service asked; refused",
                      qPrintable(m_name), qPrintable(message.messageId),
                      qPrintable(message.sender()));
            Q_EMIT errorOccurred(QStringLiteral("refused reply %1 from %2: the request went to "
                                                "another service")
                                     .arg(message.messageId, message.sender()));
            break;
        }
        return;
    case MessageKind::Request: {
        std::optional<QByteArray> answer;
        if (m_handler)
            answer = m_handler(message);
        Q_EMIT messageReceived(message);
        if (!answer)
            return;
        // The attested sender, where the broker gives one: reply_to is the envelope's claim.
        const QString replyTo = message.isAttested() ? message.sender() : message.from;
        if (message.isAttested() && !message.from.isEmpty() && message.from != replyTo)
            qCWarning(lcClient,
                      "%s: request %s names %s to reply to but was sent by %s; "
                      "replying to the sender",
                      qPrintable(m_name), qPrintable(message.messageId), qPrintable(message.from),
                      qPrintable(replyTo));
        if (replyTo.isEmpty() || message.correlationId.isEmpty()) {
            Q_EMIT errorOccurred(QStringLiteral("request %1 has no reply_to or correlation_id: "
                                                "no reply sent")
                                     .arg(message.messageId));
            return;
        }
        SendOptions options;
        options.extraFields =
            QJsonObject{{QStringLiteral("kind"), QStringLiteral("reply")},
                        {QStringLiteral("correlation_id"), message.correlationId}};
        // Through the outbox like any message, before the request is acked: a crash in between
        // means the request comes again, never a request without its reply.
        if (const auto sent = send(replyTo, answer.value(), options); !sent)
            Q_EMIT errorOccurred(
                QStringLiteral("cannot reply to %1: %2").arg(message.messageId, sent.error()));
        return;
    }
    case MessageKind::Message:
        if (m_handler)
            m_handler(message);
        Q_EMIT messageReceived(message);
        return;
    }
}

int Client::pendingCount() const
{
    return m_publisher->pendingCount();
}

int Client::duplicatesDropped() const
{
    return m_subscriber->duplicatesDropped();
}

} // namespace cmq::client
