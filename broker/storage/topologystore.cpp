#include "topologystore.h"

namespace cmq::storage {

namespace {

QString now(const SqlSession &s)
{
    return s.time(QDateTime::currentDateTimeUtc());
}

QStringList dropEntries(const SqlSession &s, const QString &queue)
{
    const QString name = s.text(queue);
    return {
        // Before the entries go, while they still say which shared envelopes this queue holds
        // (an entry with its own envelope takes it along, migration 14).
        QStringLiteral(
            "DELETE FROM message_bodies WHERE message_id IN "
            "(SELECT message_id FROM queue_entries WHERE envelope IS NULL AND queue = ") +
            name +
            QStringLiteral(") AND NOT EXISTS (SELECT 1 FROM queue_entries e WHERE "
                           "e.message_id = message_bodies.message_id AND e.queue <> ") +
            name + u')',
        QStringLiteral("DELETE FROM queue_entries WHERE queue = ") + name,
        QStringLiteral("DELETE FROM dead_letters WHERE queue = ") + name,
    };
}

} // namespace

Status saveExchange(SqlSession &session, const ExchangeRecord &exchange)
{
    const SqlSession &s = session;
    return session.exec(
        QStringLiteral("INSERT INTO exchanges (name, type, creator, created_at) VALUES (") +
        s.text(exchange.name) + u',' + s.text(exchange.type) + u',' + s.text(exchange.creator) +
        u',' + now(s) + QStringLiteral(") ON CONFLICT (name) DO UPDATE SET type = excluded.type"));
}

Status saveQueue(SqlSession &session, const QueueRecord &queue)
{
    const SqlSession &s = session;
    return session.exec(
        QStringLiteral("INSERT INTO queues (name, owner, max_length, overflow, message_ttl_ms, "
                       "dead_letter_exchange, dead_letter_routing_key, delivery_limit, "
                       "dead_letter_overflow, created_at) VALUES (") +
        s.text(queue.name) + u',' + s.text(queue.owner) + u',' +
        SqlSession::integer(queue.maxLength) + u',' + s.text(queue.overflow) + u',' +
        SqlSession::integer(queue.messageTtlMs) + u',' + s.text(queue.deadLetterExchange) + u',' +
        s.text(queue.deadLetterRoutingKey) + u',' + SqlSession::integer(queue.deliveryLimit) +
        u',' + SqlSession::integer(queue.deadLetterOverflow ? 1 : 0) + u',' + now(s) +
        QStringLiteral(") ON CONFLICT (name) DO UPDATE SET max_length = excluded.max_length, "
                       "overflow = excluded.overflow, message_ttl_ms = excluded.message_ttl_ms, "
                       "dead_letter_exchange = excluded.dead_letter_exchange, "
                       "dead_letter_routing_key = excluded.dead_letter_routing_key, "
                       "delivery_limit = excluded.delivery_limit, "
                       "dead_letter_overflow = excluded.dead_letter_overflow"));
}

Status saveBinding(SqlSession &session, const BindingRecord &binding)
{
    const SqlSession &s = session;
    return session.exec(
        QStringLiteral("INSERT INTO bindings (queue, exchange, routing_key) VALUES (") +
        s.text(binding.queue) + u',' + s.text(binding.exchange) + u',' +
        s.text(binding.routingKey) + QStringLiteral(") ON CONFLICT DO NOTHING"));
}

Status deleteQueue(SqlSession &session, const QString &queue)
{
    QStringList statements = dropEntries(session, queue);
    statements << QStringLiteral("DELETE FROM bindings WHERE queue = ") + session.text(queue);
    statements << QStringLiteral("DELETE FROM queues WHERE name = ") + session.text(queue);
    return session.execTransaction(statements);
}

Status purgeQueue(SqlSession &session, const QString &queue)
{
    return session.execTransaction(dropEntries(session, queue));
}

} // namespace cmq::storage
