#include "recovery.h"

#include <QElapsedTimer>
#include <QSqlQuery>

#include "storagelog.h"

namespace cmq::storage {

namespace {

template <typename Row> Status forEachRow(SqlSession &session, const QString &sql, Row &&row)
{
    QSqlQuery query = session.newQuery(true);
    if (Status st = session.run(query, sql); !st)
        return st;
    while (query.next())
        row(query);
    return session.finish(query);
}

} // namespace

Result<RecoveredState> loadState(SqlSession &session)
{
    using R = Result<RecoveredState>;
    QElapsedTimer timer;
    timer.start();
    RecoveredState state;

    Status st = forEachRow(
        session, QStringLiteral("SELECT name, type, creator FROM exchanges ORDER BY name"),
        [&](const QSqlQuery &q) {
            state.exchanges.append(
                {q.value(0).toString(), q.value(1).toString(), q.value(2).toString()});
        });
    if (!st)
        return R::failure(QStringLiteral("cannot load exchanges: %1").arg(st.error()));

    st = forEachRow(session,
                    QStringLiteral("SELECT name, owner, max_length, overflow FROM queues "
                                   "ORDER BY name"),
                    [&](const QSqlQuery &q) {
                        state.queues.append({q.value(0).toString(), q.value(1).toString(),
                                             q.value(2).toLongLong(), q.value(3).toString()});
                    });
    if (!st)
        return R::failure(QStringLiteral("cannot load queues: %1").arg(st.error()));

    st = forEachRow(session,
                    QStringLiteral("SELECT queue, exchange, routing_key FROM bindings "
                                   "ORDER BY queue, exchange, routing_key"),
                    [&](const QSqlQuery &q) {
                        state.bindings.append(
                            {q.value(0).toString(), q.value(1).toString(), q.value(2).toString()});
                    });
    if (!st)
        return R::failure(QStringLiteral("cannot load bindings: %1").arg(st.error()));

    // A message routed to several queues shares one envelope in memory (QByteArray is
    // implicitly shared) as long as its entries come close together, which they do: they are
    // written in one statement.
    QString lastId;
    QByteArray lastEnvelope;
    st = forEachRow(
        session,
        QStringLiteral("SELECT e.queue, e.message_id, m.client_id, m.exchange, m.routing_key, "
                       "b.envelope, m.sent_time, e.delivered FROM queue_entries e "
                       "JOIN message_metadata m ON m.message_id = e.message_id "
                       "JOIN message_bodies b ON b.message_id = e.message_id ORDER BY e.id"),
        [&](const QSqlQuery &q) {
            QueueEntry entry;
            entry.queue = q.value(0).toString();
            const QString id = q.value(1).toString();
            entry.messageId = id.toUtf8();
            entry.sender = q.value(2).toString();
            entry.exchange = q.value(3).toString();
            entry.routingKey = q.value(4).toString();
            if (id == lastId) {
                entry.envelope = lastEnvelope;
            } else {
                entry.envelope = q.value(5).toByteArray();
                lastId = id;
                lastEnvelope = entry.envelope;
            }
            entry.sentTime = session.toTime(q.value(6));
            entry.redelivered = q.value(7).toBool();
            state.entries.append(std::move(entry));
        });
    if (!st)
        return R::failure(QStringLiteral("cannot load queue entries: %1").arg(st.error()));

    qCInfo(lcStorage,
           "recovered %lld exchanges, %lld queues, %lld bindings and %lld queued "
           "messages in %lld ms",
           qint64(state.exchanges.size()), qint64(state.queues.size()),
           qint64(state.bindings.size()), qint64(state.entries.size()), timer.elapsed());
    return state;
}

} // namespace cmq::storage
