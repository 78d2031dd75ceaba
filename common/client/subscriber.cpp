#include "client/subscriber.h"

#include "client/clientlog.h"
#include "client/messageid.h"
#include "crypto/envelopecrypto.h"

namespace cmq::client {

namespace {

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
    : QObject(parent), m_seen(dedupeCapacity)
{
}

void Subscriber::attach(BrokerConnection *connection)
{
    m_connection = connection;
    m_redelivered.clear();
}

void Subscriber::detach()
{
    // Deliveries not acked on that connection come back on the next one, flagged.
    m_connection = nullptr;
    m_redelivered.clear();
    m_held.clear();
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
    if (line.startsWith("Redelivered: ")) {
        m_redelivered.insert(line.mid(13));
        return;
    }
    // "Message: <id> <json>"
    const qsizetype idEnd = line.indexOf(' ', 9);
    if (idEnd < 0) {
        qCWarning(lcClient, "malformed delivery line: %s", line.left(200).constData());
        return;
    }
    const QByteArray id = line.mid(9, idEnd - 9);
    const QString messageId = QString::fromUtf8(id);
    const bool redelivered = m_redelivered.remove(id);
    if (m_seen.contains(messageId)) {
        ++m_duplicates;
        acknowledge(id);
        return;
    }

    const auto parsed = crypto::parseEnvelopeJson(QByteArrayView(line).sliced(idEnd + 1));
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
        if (m_connection)
            m_connection->request("nack " + id + " drop", {});
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
    message.redelivered = redelivered;
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
    if (!m_connection)
        return;
    m_connection->request("ack " + messageId, [messageId](const Result<QByteArray> &reply) {
        if (reply && reply.value() != "ACK_CONFIRMED " + messageId)
            qCWarning(lcClient, "ack %s: %s", messageId.constData(), reply->constData());
    });
}

} // namespace cmq::client
