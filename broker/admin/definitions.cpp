#include "admin/definitions.h"

#include <algorithm>

#include <QJsonArray>
#include <QJsonDocument>

#include "core/exchangetype.h"
#include "core/queue.h"
#include "core/router.h"
#include "protocol/request.h"

namespace cmq {

namespace {

using R = Result<Definitions>;

template <typename T, typename Less> QList<T> sorted(QList<T> list, Less less)
{
    std::sort(list.begin(), list.end(), less);
    return list;
}

bool validName(const QJsonValue &value)
{
    return value.isString() && protocol::isValidName(value.toString().toUtf8());
}

// A whole non-negative number, or `fallback` when absent.
bool count(const QJsonObject &o, const char *field, qint64 fallback, qint64 &out)
{
    const QJsonValue v = o.value(QLatin1StringView(field));
    if (v.isUndefined()) {
        out = fallback;
        return true;
    }
    if (!v.isDouble() || v.toDouble() < 0 || v.toDouble() != double(v.toInteger()))
        return false;
    out = v.toInteger();
    return true;
}

Status parseExchanges(const QJsonArray &list, Definitions &d)
{
    for (const QJsonValue &value : list) {
        const QJsonObject o = value.toObject();
        const QString type = o.value("type").toString(QStringLiteral("direct"));
        if (!validName(o.value("name")))
            return failure(QStringLiteral("exchanges: every entry needs a valid \"name\""));
        if (!findExchangeType(type))
            return failure(QStringLiteral("exchange '%1': unknown type '%2'")
                               .arg(o.value("name").toString(), type));
        d.exchanges.append({o.value("name").toString(), type, o.value("creator").toString()});
    }
    return success();
}

Status parseQueues(const QJsonArray &list, Definitions &d)
{
    for (const QJsonValue &value : list) {
        const QJsonObject o = value.toObject();
        if (!validName(o.value("name")))
            return failure(QStringLiteral("queues: every entry needs a valid \"name\""));
        storage::QueueRecord q;
        q.name = o.value("name").toString();
        q.owner = o.value("owner").toString();
        q.overflow = o.value("overflow").toString(QStringLiteral("drop-head"));
        if (q.owner.isEmpty() || !validName(o.value("owner")))
            return failure(QStringLiteral("queue '%1': \"owner\" must be a CN").arg(q.name));
        if (q.overflow != QLatin1String("drop-head") &&
            q.overflow != QLatin1String("reject-publish"))
            return failure(QStringLiteral("queue '%1': \"overflow\" must be drop-head or "
                                          "reject-publish")
                               .arg(q.name));
        if (!count(o, "max_length", 0, q.maxLength) ||
            !count(o, "message_ttl_ms", 0, q.messageTtlMs) ||
            !count(o, "delivery_limit", 0, q.deliveryLimit))
            return failure(QStringLiteral("queue '%1': \"max_length\", \"message_ttl_ms\" and "
                                          "\"delivery_limit\" must be whole numbers, 0 or more")
                               .arg(q.name));
        // The dead-letter settings (absent in documents written before them: none).
        q.deadLetterExchange = o.value("dead_letter_exchange").toString();
        q.deadLetterRoutingKey = o.value("dead_letter_routing_key").toString();
        q.deadLetterOverflow = o.value("dead_letter_overflow").toBool(false);
        if ((!q.deadLetterExchange.isEmpty() && !validName(o.value("dead_letter_exchange"))) ||
            (!q.deadLetterRoutingKey.isEmpty() && !validName(o.value("dead_letter_routing_key"))))
            return failure(QStringLiteral("queue '%1': \"dead_letter_exchange\" and "
                                          "\"dead_letter_routing_key\" must be names")
                               .arg(q.name));
        d.queues.append(q);
    }
    return success();
}

Status parseBindings(const QJsonArray &list, Definitions &d)
{
    for (const QJsonValue &value : list) {
        const QJsonObject o = value.toObject();
        if (!validName(o.value("queue")) || !validName(o.value("exchange")) ||
            !validName(o.value("routing_key")))
            return failure(QStringLiteral("bindings: every entry needs a valid \"queue\", "
                                          "\"exchange\" and \"routing_key\""));
        d.bindings.append({o.value("queue").toString(), o.value("exchange").toString(),
                           o.value("routing_key").toString()});
    }
    return success();
}

} // namespace

QJsonObject definitionsToJson(const Router &router)
{
    QJsonArray exchanges, queues, bindings;
    for (const ExchangeInfo &e :
         sorted(router.exchanges().values(),
                [](const ExchangeInfo &a, const ExchangeInfo &b) { return a.name < b.name; })) {
        exchanges.append(QJsonObject{{QStringLiteral("name"), e.name},
                                     {QStringLiteral("type"), e.type},
                                     {QStringLiteral("creator"), e.creator}});
    }
    for (const Queue *q : sorted(router.queues().values(), [](const Queue *a, const Queue *b) {
             return a->name() < b->name();
         })) {
        const DeadLetterPolicy &dl = q->deadLetterPolicy();
        queues.append(QJsonObject{{QStringLiteral("name"), q->name()},
                                  {QStringLiteral("owner"), q->owner()},
                                  {QStringLiteral("max_length"), q->maxLength()},
                                  {QStringLiteral("overflow"), q->overflow()},
                                  {QStringLiteral("message_ttl_ms"), q->messageTtlMs()},
                                  {QStringLiteral("dead_letter_exchange"), dl.exchange},
                                  {QStringLiteral("dead_letter_routing_key"), dl.routingKey},
                                  {QStringLiteral("delivery_limit"), dl.deliveryLimit},
                                  {QStringLiteral("dead_letter_overflow"), dl.onOverflow}});
    }
    const auto key = [](const storage::BindingRecord &b) {
        return std::tie(b.queue, b.exchange, b.routingKey);
    };
    for (const storage::BindingRecord &b :
         sorted(router.bindings(), [&](const auto &x, const auto &y) { return key(x) < key(y); })) {
        bindings.append(QJsonObject{{QStringLiteral("queue"), b.queue},
                                    {QStringLiteral("exchange"), b.exchange},
                                    {QStringLiteral("routing_key"), b.routingKey}});
    }
    return QJsonObject{{QStringLiteral("ciphermq_definitions"), DefinitionsFormat},
                       {QStringLiteral("exchanges"), exchanges},
                       {QStringLiteral("queues"), queues},
                       {QStringLiteral("bindings"), bindings}};
}

Result<Definitions> parseDefinitions(const QByteArray &json)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (doc.isNull() || !doc.isObject())
        return R::failure(
            QStringLiteral("Invalid definitions: not a JSON object (%1)")
                .arg(doc.isNull() ? error.errorString() : QStringLiteral("an array")));
    const QJsonObject o = doc.object();
    if (o.value("ciphermq_definitions").toInt(-1) != DefinitionsFormat)
        return R::failure(QStringLiteral("Invalid definitions: \"ciphermq_definitions\" must be "
                                         "%1")
                              .arg(DefinitionsFormat));
    Definitions d;
    for (const Status &st : {parseExchanges(o.value("exchanges").toArray(), d),
                             parseQueues(o.value("queues").toArray(), d),
                             parseBindings(o.value("bindings").toArray(), d)}) {
        if (!st)
            return R::failure(QStringLiteral("Invalid definitions: %1").arg(st.error()));
    }
    return d;
}

} // namespace cmq
