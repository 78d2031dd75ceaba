#include "client/subscriber.h"

#include <QJsonDocument>

#include "client/clientlog.h"
#include "client/messageid.h"
#include "crypto/envelopecrypto.h"
#include "protocol/replyreader.h"

namespace cmq::client {

namespace {

using ReplyKind = protocol::ReplyLine::Kind;

// The broker's answer to a request over the client's rate (docs/PROTOCOL.md): not executed,
// so the same request may be sent again later.
bool isRateLimited(const QByteArray &line)
{
    return protocol::readReply(line).isError("rate limit exceeded");
}
// The rate limit refills continuously (100 requests/s by default): a short first pause, then
// doubling while refusals go on.
constexpr int AckRetryInitialMs = 50;
constexpr int AckRetryMaxMs = 1000;

// The "Meta:" line's JSON (docs/PROTOCOL.md); unknown keys are for later brokers.
DeliveryFacts factsFrom(const QJsonObject &meta)
{
    DeliveryFacts facts;
    facts.sender = meta.value(QLatin1StringView("sender")).toString();
    facts.publishedAt =
        QDateTime::fromString(meta.value(QLatin1StringView("published_at")).toString(),
                              Qt::ISODateWithMs)
            .toUTC();
    facts.redelivered = meta.value(QLatin1StringView("redelivered")).toBool();
    facts.deliveryCount = meta.value(QLatin1StringView("delivery_count")).toInt();
    facts.deadLetterReason = meta.value(QLatin1StringView("dead_letter_reason")).toString();
    facts.deadLetterOriginalQueue =
        meta.value(QLatin1StringView("dead_letter_original_queue")).toString();
    facts.deadLetteredAt =
        QDateTime::fromString(meta.value(QLatin1StringView("dead_lettered_at")).toString(),
                              Qt::ISODateWithMs)
            .toUTC();
    facts.deadLetterDeliveryCount =
        meta.value(QLatin1StringView("dead_letter_delivery_count")).toInt();
    return facts;
}

MessageKind kindOf(const QJsonObject &extra)
{
    const QString kind = extra.value(QLatin1StringView("kind")).toString();
    if (kind == u"request")
        return MessageKind::Request;
    if (kind == u"reply")
        return MessageKind::Reply;
    return MessageKind::Message;
}

} // namespace

Subscriber::Subscriber(int dedupeCapacity, QObject *parent)
    : QObject(parent), m_seen(dedupeCapacity), m_ackRetryDelayMs(AckRetryInitialMs)
{
    m_ackRetryTimer.setSingleShot(true);
    connect(&m_ackRetryTimer, &QTimer::timeout, this, &Subscriber::retrySettles);
}

void Subscriber::attach(BrokerConnection *connection)
{
    resetAcks();
    m_connection = connection;
    m_redelivered.clear();
    m_meta.clear();
}

void Subscriber::detach()
{
    // Deliveries not acked on that connection come back on the next one, flagged.
    m_connection = nullptr;
    m_redelivered.clear();
    m_meta.clear();
    m_held.clear();
    resetAcks();
}

void Subscriber::resetAcks()
{
    // An ack counts only on the connection that got the delivery: pending ones are void.
    m_ackRetry.clear();
    m_ackRetryTimer.stop();
    m_ackRetryDelayMs = AckRetryInitialMs;
    m_retryInFlight = false;
    m_acksInFlight = 0;
}

void Subscriber::setPaused(bool paused)
{
    m_paused = paused;
    while (!m_paused && !m_held.isEmpty())
        handleMessage(m_held.takeFirst());
}

void Subscriber::handlePush(const QByteArray &line)
{
    if (m_paused || !m_held.isEmpty()) {
        m_held.append(line);
        return;
    }
    handleMessage(line);
}

void Subscriber::handleMessage(const QByteArray &line)
{
    const protocol::ReplyLine delivery = protocol::readReply(line);
    if (delivery.kind == ReplyKind::Redelivered) {
        m_redelivered.insert(delivery.id.toByteArray());
        return;
    }
    if (delivery.kind == ReplyKind::Meta) {
        // Its Message line comes next; the two are one delivery.
        m_meta.insert(delivery.id.toByteArray(),
                      factsFrom(QJsonDocument::fromJson(delivery.text.toByteArray()).object()));
        return;
    }
    // "Message: <id> <json>"
    if (delivery.kind != ReplyKind::Message || delivery.text.isNull()) {
        qCWarning(lcClient, "malformed delivery line: %s", line.left(200).constData());
        return;
    }
    const QByteArray id = delivery.id.toByteArray();
    const QString messageId = QString::fromUtf8(id);
    const bool redelivered = m_redelivered.remove(id);
    DeliveryFacts facts = m_meta.take(id);
    facts.redelivered = facts.redelivered || redelivered;
    if (m_seen.contains(messageId)) {
        ++m_duplicates;
        acknowledge(id);
        return;
    }

    const auto parsed = crypto::parseEnvelopeJson(delivery.text);
    QString error;
    QByteArray plaintext;
    if (!parsed) {
        error = parsed.error();
    } else {
        auto opened = crypto::open(parsed->sealed, m_keys);
        if (opened)
            plaintext = std::move(opened).value();
        else
            error = opened.error();
    }
    if (!error.isEmpty()) {
        qCWarning(lcClient, "message %s cannot be opened: %s", id.constData(), qPrintable(error));
        m_seen.add(messageId);
        settle("nack " + id + " drop");
        Q_EMIT rejected(messageId, error);
        return;
    }

    IncomingMessage message;
    message.messageId = messageId;
    message.payload = std::move(plaintext);
    message.extraFields = parsed->extraFields;
    message.kind = kindOf(message.extraFields);
    message.correlationId =
        message.extraFields.value(QLatin1StringView("correlation_id")).toString();
    message.from = message.extraFields.value(QLatin1StringView("reply_to")).toString();
    if (message.from.isEmpty())
        message.from = parseMessageId(messageId).sender;
    message.facts = std::move(facts);
    message.sentTime = parsed->sentTime;

    // The connection may change while the application runs (it may even spin an event loop).
    const QPointer<BrokerConnection> deliveredOn = m_connection;
    if (m_deliver)
        m_deliver(message);
    m_seen.add(messageId);
    if (deliveredOn && deliveredOn == m_connection)
        acknowledge(id);
}

void Subscriber::acknowledge(const QByteArray &messageId)
{
    settle("ack " + messageId);
}

void Subscriber::settle(const QByteArray &line)
{
    if (!m_connection)
        return;
    // Behind the refused ones: sent now, it would most likely be refused as well.
    if (m_retryInFlight || !m_ackRetry.isEmpty()) {
        m_ackRetry.append(line);
        return;
    }
    writeSettle(line, false);
}

void Subscriber::writeSettle(const QByteArray &line, bool retry)
{
    ++m_acksInFlight;
    m_retryInFlight = m_retryInFlight || retry;
    const QPointer<Subscriber> self = this;
    const QPointer<BrokerConnection> on = m_connection;
    m_connection->request(line, [self, on, line, retry](const Result<QByteArray> &reply) {
        // An answer from a connection we have left (or its loss) settles nothing on this one.
        if (self && on && on == self->m_connection)
            self->onSettleReply(line, retry, reply);
    });
}

void Subscriber::onSettleReply(const QByteArray &line, bool retry, const Result<QByteArray> &reply)
{
    --m_acksInFlight;
    if (retry)
        m_retryInFlight = false;
    if (reply && isRateLimited(reply.value())) {
        if (retry)
            m_ackRetry.prepend(line);
        else
            m_ackRetry.append(line);
        if (!m_retryInFlight && !m_ackRetryTimer.isActive()) {
            m_ackRetryTimer.start(m_ackRetryDelayMs);
            m_ackRetryDelayMs = qMin(m_ackRetryDelayMs * 2, AckRetryMaxMs);
        }
        return;
    }
    if (reply) {
        m_ackRetryDelayMs = AckRetryInitialMs;
        // "ack <id>" is answered "ACK_CONFIRMED <id>", "nack <id> drop" "NACK_CONFIRMED <id>".
        const qsizetype idStart = line.indexOf(' ') + 1;
        const qsizetype idEnd = line.indexOf(' ', idStart);
        const QByteArray id = line.mid(idStart, idEnd < 0 ? -1 : idEnd - idStart);
        const protocol::ReplyLine settled = protocol::readReply(reply.value());
        const ReplyKind expected =
            line.startsWith("ack ") ? ReplyKind::AckConfirmed : ReplyKind::NackConfirmed;
        if (settled.kind != expected || settled.id != id)
            qCWarning(lcClient, "%s: %s", line.constData(), reply->constData());
    }
    if (retry && !m_ackRetry.isEmpty() && !m_ackRetryTimer.isActive())
        retrySettles(); // the limit let the last one through: the next one goes at once
    if (unsettledAcks() == 0)
        Q_EMIT acksSettled();
}

void Subscriber::retrySettles()
{
    if (!m_connection || m_retryInFlight || m_ackRetry.isEmpty())
        return;
    writeSettle(m_ackRetry.takeFirst(), true);
}

} // namespace cmq::client
