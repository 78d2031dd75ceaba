#include "client/outboxentry.h"

#include <QJsonDocument>
#include <QJsonParseError>

namespace cmq::client {

namespace {
const QLatin1StringView IdKey("message_id");
const QLatin1StringView ReceiverKey("receiver");
const QLatin1StringView ExchangeKey("exchange");
const QLatin1StringView RoutingKeyKey("routing_key");
const QLatin1StringView EnvelopeKey("envelope");
const QLatin1StringView PayloadKey("payload_b64");
const QLatin1StringView ExtraKey("extra_fields");
const QLatin1StringView CreatedKey("created_at");
const QLatin1StringView SequenceKey("sequence");
} // namespace

QByteArray OutboxEntry::toJson() const
{
    QJsonObject object{
        {IdKey, messageId},
        {ReceiverKey, receiver},
        {ExchangeKey, exchange},
        {RoutingKeyKey, routingKey},
        {SequenceKey, QString::number(sequence)}, // as text: JSON numbers are doubles
        {CreatedKey, createdAt.toUTC().toString(Qt::ISODateWithMs)},
    };
    if (isSealed())
        object.insert(EnvelopeKey, QString::fromUtf8(envelope));
    else
        object.insert(PayloadKey, QString::fromLatin1(payload.toBase64()));
    if (!extraFields.isEmpty())
        object.insert(ExtraKey, extraFields);
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

Result<OutboxEntry> OutboxEntry::fromJson(const QByteArray &json)
{
    using R = Result<OutboxEntry>;
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        return R::failure(QStringLiteral("not an outbox entry: %1").arg(error.errorString()));
    const QJsonObject object = document.object();
    OutboxEntry entry;
    entry.messageId = object.value(IdKey).toString();
    entry.receiver = object.value(ReceiverKey).toString();
    entry.exchange = object.value(ExchangeKey).toString();
    entry.routingKey = object.value(RoutingKeyKey).toString();
    bool sequenceOk = false;
    entry.sequence = object.value(SequenceKey).toString().toLongLong(&sequenceOk);
    entry.createdAt = QDateTime::fromString(object.value(CreatedKey).toString(), Qt::ISODateWithMs);
    entry.extraFields = object.value(ExtraKey).toObject();
    if (object.contains(EnvelopeKey)) {
        entry.envelope = object.value(EnvelopeKey).toString().toUtf8();
    } else {
        auto decoded =
            QByteArray::fromBase64Encoding(object.value(PayloadKey).toString().toLatin1(),
                                           QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded || !object.value(PayloadKey).isString())
            return R::failure(
                QStringLiteral("outbox entry %1 has no valid payload").arg(entry.messageId));
        entry.payload = std::move(decoded.decoded);
    }
    if (entry.messageId.isEmpty() || entry.exchange.isEmpty() || entry.routingKey.isEmpty() ||
        !sequenceOk)
        return R::failure(QStringLiteral("outbox entry is missing its id, exchange, routing key "
                                         "or sequence"));
    if (!entry.isSealed() && entry.receiver.isEmpty())
        return R::failure(
            QStringLiteral("outbox entry %1 is neither sealed nor addressed").arg(entry.messageId));
    return entry;
}

} // namespace cmq::client
