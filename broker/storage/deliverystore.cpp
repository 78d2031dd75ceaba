#include "deliverystore.h"

#include <QSqlQuery>

namespace cmq::storage {

namespace {

using Kind = DeliveryUpdate::Kind;

// "(queue, message_id) IN (VALUES ...)" and "WITH v (message_id, event_time) AS (VALUES ...) UPDATE
// ... FROM v" read the same in PostgreSQL and in SQLite (3.33 and later).
struct Lists
{
    QString pairs; // ('queue', 'id'), ...
    QString times; // ('id', time), ...
    QString ids;   // 'id', ...
    bool isEmpty() const { return pairs.isEmpty(); }
};

Lists listsFor(const SqlSession &s, const QList<DeliveryUpdate> &updates, Kind kind)
{
    Lists lists;
    for (const DeliveryUpdate &update : updates) {
        if (update.kind != kind)
            continue;
        const QString id = s.text(update.messageId);
        if (!lists.isEmpty()) {
            lists.pairs += u',';
            lists.times += u',';
            lists.ids += u',';
        }
        lists.pairs += u'(' + s.text(update.queue) + u',' + id + u')';
        lists.times += u'(' + id + u',' + s.time(update.at) + u')';
        lists.ids += id;
    }
    return lists;
}

QString deleteEntries(const Lists &lists)
{
    return QStringLiteral("DELETE FROM queue_entries WHERE (queue, message_id) IN (VALUES ") +
           lists.pairs + u')';
}

// Runs after the entries are deleted (a separate statement, so it sees that delete).
QString deleteOrphanBodies(const Lists &lists)
{
    return QStringLiteral("DELETE FROM message_bodies WHERE message_id IN (") + lists.ids +
           QStringLiteral(") AND NOT EXISTS (SELECT 1 FROM queue_entries e "
                          "WHERE e.message_id = message_bodies.message_id)");
}

} // namespace

Status applyDeliveryUpdates(SqlSession &session, const QList<DeliveryUpdate> &updates)
{
    const Lists delivered = listsFor(session, updates, Kind::Delivered);
    const Lists acknowledged = listsFor(session, updates, Kind::Acknowledged);
    const Lists evicted = listsFor(session, updates, Kind::Evicted);

    QStringList statements;
    if (!delivered.isEmpty()) {
        statements << QStringLiteral("UPDATE queue_entries SET delivered = TRUE "
                                     "WHERE (queue, message_id) IN (VALUES ") +
                          delivered.pairs + u')';
        // The first delivery wins; a message delivered again after a restart keeps its time.
        statements << QStringLiteral("WITH v (message_id, event_time) AS (VALUES ") +
                          delivered.times +
                          QStringLiteral(
                              ") UPDATE message_metadata SET delivered_time = v.event_time, "
                              "status = CASE WHEN status = 'sent' THEN 'delivered' "
                              "ELSE status END FROM v "
                              "WHERE message_metadata.message_id = v.message_id "
                              "AND message_metadata.delivered_time IS NULL");
    }
    if (!acknowledged.isEmpty()) {
        statements << deleteEntries(acknowledged);
        statements << QStringLiteral("WITH v (message_id, event_time) AS (VALUES ") +
                          acknowledged.times +
                          QStringLiteral(
                              ") UPDATE message_metadata SET acknowledged_time = v.event_time, "
                              "status = 'acknowledged' FROM v "
                              "WHERE message_metadata.message_id = v.message_id");
        statements << deleteOrphanBodies(acknowledged);
    }
    if (!evicted.isEmpty()) {
        statements << deleteEntries(evicted);
        // An ack from another queue is the stronger fact; do not turn it back into Evicted.
        statements << QStringLiteral("WITH v (message_id, event_time) AS (VALUES ") +
                          evicted.times +
                          QStringLiteral(
                              ") UPDATE message_metadata SET evicted_time = v.event_time, "
                              "status = CASE WHEN status = 'acknowledged' THEN status "
                              "ELSE 'evicted' END FROM v "
                              "WHERE message_metadata.message_id = v.message_id");
        statements << deleteOrphanBodies(evicted);
    }
    if (statements.isEmpty())
        return success();
    // Fire-and-forget state: no reason to wait for the disk, and the publish commits that share
    // the log should not queue behind it. A crash of the machine (not of the broker) can lose
    // the last of these, which means a redelivery: at-least-once still holds.
    if (session.isPostgres()) {
        statements.prepend(QStringLiteral("SET LOCAL synchronous_commit TO off"));
        return session.execTransaction(statements);
    }
    (void)session.exec(QStringLiteral("PRAGMA synchronous=NORMAL")); // not inside a transaction
    const Status st = session.execTransaction(statements);
    (void)session.exec(QStringLiteral("PRAGMA synchronous=FULL"));
    return st;
}

Result<qint64> purgeExpiredMetadata(SqlSession &session, const QDateTime &cutoff, int limit)
{
    const QString before = session.time(cutoff);
    // sent_time < cutoff narrows by index first; the last event is never earlier than sending.
    const QString sql =
        QStringLiteral("DELETE FROM message_metadata WHERE message_id IN ("
                       "SELECT m.message_id FROM message_metadata m WHERE m.sent_time <= ") +
        before +
        QStringLiteral(" AND COALESCE(m.acknowledged_time, m.evicted_time, m.delivered_time, "
                       "m.sent_time) <= ") +
        before +
        QStringLiteral(" AND NOT EXISTS (SELECT 1 FROM queue_entries e "
                       "WHERE e.message_id = m.message_id) LIMIT ") +
        QString::number(limit) + u')';
    QSqlQuery query = session.newQuery();
    if (Status st = session.run(query, sql); !st)
        return Result<qint64>::failure(st.error());
    const qint64 removed = query.numRowsAffected();
    if (Status st = session.finish(query); !st)
        return Result<qint64>::failure(st.error());
    return removed;
}

} // namespace cmq::storage
