#include "deliverystore.h"

#include <QHash>
#include <QSet>
#include <QSqlError>
#include <QSqlQuery>

#include "libpq.h"
#include "sqliteapi.h"

namespace cmq::storage {

namespace {

using Kind = DeliveryUpdate::Kind;

// The plain-SQL path, for PostgreSQL without libpq: "(queue, message_id) IN (VALUES ...)" and
// "WITH v (message_id, event_time) AS (VALUES ...) UPDATE ... FROM v" lists, one script a batch.
struct Lists
{
    QString pairs; // ('queue', 'id'), ...; without the entries in `skipEntries` of listsFor()
    QString times; // ('id', time), ...
    QString ids;   // 'id', ...
    bool isEmpty() const { return ids.isEmpty(); }
};

using EntryKeys = QSet<std::pair<QString, QString>>; // (queue, message id)

void appendItem(QString &list, const QString &item)
{
    if (!list.isEmpty())
        list += u',';
    list += item;
}

// One time per message, as the libpq path folds them: an `UPDATE ... FROM` that joins a row to
// two list rows uses either one, unpredictably. The first delivery wins; of acknowledgements and
// evictions the last.
Lists listsFor(const SqlSession &s, const QList<DeliveryUpdate> &updates, Kind kind,
               const EntryKeys &skipEntries = {})
{
    Lists lists;
    QStringList times;
    QHash<QString, qsizetype> timeOf; // message id -> its index in `times`
    for (const DeliveryUpdate &update : updates) {
        if (update.kind != kind)
            continue;
        const QString id = s.text(update.messageId);
        if (!skipEntries.contains({update.queue, update.messageId}))
            appendItem(lists.pairs, u'(' + s.text(update.queue) + u',' + id + u')');
        const QString time = u'(' + id + u',' + s.time(update.at) + u')';
        if (const auto seen = timeOf.constFind(update.messageId); seen == timeOf.cend()) {
            timeOf.insert(update.messageId, times.size());
            times.append(time);
        } else if (kind != Kind::Delivered) {
            times[*seen] = time;
        }
        appendItem(lists.ids, id);
    }
    lists.times = times.join(u',');
    return lists;
}

// The entries that leave their queue in this batch (acknowledged or evicted): they need no
// delivered flag first. Since an entry may carry its envelope (migration 14), setting the flag
// would write a new version of the whole row only for the delete beside it to remove it.
EntryKeys leavingEntries(const QList<DeliveryUpdate> &updates)
{
    EntryKeys gone;
    for (const DeliveryUpdate &update : updates) {
        if (update.kind != DeliveryUpdate::Kind::Delivered)
            gone.insert({update.queue, update.messageId});
    }
    return gone;
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

// --- PostgreSQL: one prepared statement with binary arrays ---------------------------------
//
// The text path below costs PostgreSQL a parse and a plan per statement and a round trip each;
// at tens of thousands of updates a second that is most of the database's time. Here the
// updates are first folded per message (a message delivered and acknowledged within one batch
// gets one metadata update, not two), then written by one prepared statement.

const char UpdatesStatementName[] = "ciphermq_delivery_updates";
// $1..$4: per message id, the delivered/acknowledged/evicted times in ms since the epoch (0 =
// no such event in this batch). $5, $6: the (queue, message id) entries that left their queue;
// $7, $8: those delivered and still there. One statement sees one snapshot, in which the entries
// deleted beside it still exist: a body goes when the message has no more entries than this
// statement deleted. Only entries without their own envelope point at a shared body (migration
// 14): a message held by one queue took its envelope with its entry, and costs no body look-up.
//
// Every row is found by one index probe per array element (a LATERAL subquery that the array
// drives; OFFSET 0 keeps the planner from flattening it into a join it could reorder), and the
// statement updates or deletes the rows by the row ids (ctid) found: the plan has no join whose
// order or method the planner picks from its estimates. The generic plan of a prepared statement is
// made from the tables as they are when it is (re)built, after any ANALYZE; built while
// queue_entries was empty (a drained queue), the joins this statement had before became a full scan
// of queue_entries for every batch, 2 s for 500 acks behind 20,000 entries, a drain at 1,000 msg/s
// (bench/README.md, "A drain at 1,000 msg/s: a plan made for an empty queue"). A look-up names only
// message_id as an index condition: "queue IS NOT DISTINCT FROM" (queue is NOT NULL, so it means
// "=") is none, so the (queue, id) key, which a tie in the estimates of an empty table picked,
// cannot serve it, and the (message_id, queue) index finds the message's few entries. Counting a
// message's remaining entries goes through the same index; with a generic plan's estimate of 10
// rows per array, looking each remaining entry up in the deleted ones was quadratic in the batch
// (bench/README.md, "Where the time goes"). No other session updates these rows (the worker's
// connection only inserts them and deletes some), so a row id read by the statement's snapshot
// names the version the statement changes; one deleted meanwhile is skipped, as before.
const char UpdatesStatement[] =
    "WITH u AS (SELECT id, NULLIF(d, 0) AS d, NULLIF(a, 0) AS a, NULLIF(e, 0) AS e "
    "FROM unnest($1::text[], $2::int8[], $3::int8[], $4::int8[]) AS x (id, d, a, e)), "
    "meta AS (UPDATE message_metadata m SET "
    "delivered_time = COALESCE(m.delivered_time, timestamptz 'epoch' + u.d * interval '1 ms'), "
    "acknowledged_time = COALESCE(timestamptz 'epoch' + u.a * interval '1 ms', "
    "m.acknowledged_time), "
    "evicted_time = COALESCE(timestamptz 'epoch' + u.e * interval '1 ms', m.evicted_time), "
    "status = CASE WHEN u.a IS NOT NULL OR m.status = 'acknowledged' THEN 'acknowledged' "
    "WHEN u.e IS NOT NULL THEN 'evicted' "
    "WHEN u.d IS NOT NULL AND m.status = 'sent' THEN 'delivered' ELSE m.status END "
    "FROM (SELECT u.*, x.tid FROM u CROSS JOIN LATERAL (SELECT x.ctid AS tid "
    "FROM message_metadata x WHERE x.message_id = u.id OFFSET 0) x) AS u WHERE m.ctid = u.tid), "
    "delivered AS (UPDATE queue_entries q SET delivered = TRUE WHERE q.ctid = ANY (ARRAY("
    "SELECT x.ctid FROM unnest($7::text[], $8::text[]) AS d (queue, id) CROSS JOIN LATERAL "
    "(SELECT x.ctid FROM queue_entries x WHERE x.message_id = d.id "
    "AND x.queue IS NOT DISTINCT FROM d.queue AND NOT x.delivered OFFSET 0) x))), "
    "entries AS (DELETE FROM queue_entries q WHERE q.ctid = ANY (ARRAY("
    "SELECT x.ctid FROM unnest($5::text[], $6::text[]) AS g (queue, id) CROSS JOIN LATERAL "
    "(SELECT x.ctid FROM queue_entries x WHERE x.message_id = g.id "
    "AND x.queue IS NOT DISTINCT FROM g.queue OFFSET 0) x)) "
    "RETURNING q.message_id, q.envelope IS NULL AS shared), "
    "removed AS (SELECT message_id, count(*) AS n FROM entries WHERE shared "
    "GROUP BY message_id) "
    "DELETE FROM message_bodies b WHERE b.ctid = ANY (ARRAY("
    "SELECT (SELECT x.ctid FROM message_bodies x WHERE x.message_id = r.message_id) "
    "FROM removed r "
    "WHERE (SELECT count(*) FROM queue_entries q WHERE q.message_id = r.message_id) = r.n))";

// For this transaction only. Fire-and-forget state: no reason to wait for the disk (see
// applyDeliveryUpdates). And find rows by index: the prepared statement's generic plan is made
// once, while the tables are small, and a sequential scan chosen then would stay the plan while
// the metadata table grows (rows are kept for the retention period): a full scan per batch.
// A connection that writes nothing but these updates (SqlSession::updatesOnly()) keeps the same
// settings for its whole session instead: each update is then one statement, its own implicit
// transaction, a single round trip where BEGIN, the settings, the statement and COMMIT take four.
const char TransactionSettings[] = "SELECT set_config('synchronous_commit', 'off', true), "
                                   "set_config('enable_seqscan', 'off', true)";
const char SessionSettings[] = "SELECT set_config('synchronous_commit', 'off', false), "
                               "set_config('enable_seqscan', 'off', false)";

// Checks a command's outcome and frees its result; false with `error` set otherwise.
bool runCommand(const pq::Api &api, pq::ResultSet *result, QString *error,
                pq::ExecStatus expected = pq::CommandOk)
{
    const bool ok = result && api.resultStatus(result) == expected;
    if (!ok)
        *error = pq::errorText(api, result);
    if (result)
        api.clear(result);
    return ok;
}

Status applyPostgresBinary(SqlSession &session, const pq::Link &link,
                           const QList<DeliveryUpdate> &updates)
{
    struct Times
    {
        qint64 delivered = 0, acknowledged = 0, evicted = 0;
    };
    QHash<QString, Times> perMessage;
    QStringList order; // first-seen order keeps the statement deterministic
    pq::BinaryArray goneQueues(pq::TextOid), goneIds(pq::TextOid);
    const EntryKeys gone = leavingEntries(updates);
    pq::BinaryArray deliveredQueues(pq::TextOid), deliveredIds(pq::TextOid);
    for (const DeliveryUpdate &update : updates) {
        auto it = perMessage.find(update.messageId);
        if (it == perMessage.end()) {
            it = perMessage.insert(update.messageId, Times{});
            order.append(update.messageId);
        }
        const qint64 ms = qMax<qint64>(1, update.at.toMSecsSinceEpoch());
        switch (update.kind) {
        case DeliveryUpdate::Kind::Delivered:
            // The first delivery wins, as in the database.
            if (it->delivered == 0)
                it->delivered = ms;
            if (!gone.contains({update.queue, update.messageId})) {
                deliveredQueues.append(update.queue.toUtf8());
                deliveredIds.append(update.messageId.toUtf8());
            }
            break;
        case DeliveryUpdate::Kind::Acknowledged:
            it->acknowledged = ms;
            goneQueues.append(update.queue.toUtf8());
            goneIds.append(update.messageId.toUtf8());
            break;
        case DeliveryUpdate::Kind::Evicted:
            it->evicted = ms;
            goneQueues.append(update.queue.toUtf8());
            goneIds.append(update.messageId.toUtf8());
            break;
        }
    }
    pq::BinaryArray ids(pq::TextOid), delivered(pq::Int8Oid), acknowledged(pq::Int8Oid),
        evicted(pq::Int8Oid);
    for (const QString &id : std::as_const(order)) {
        const Times &t = perMessage[id];
        ids.append(id.toUtf8());
        delivered.appendInt64(t.delivered);
        acknowledged.appendInt64(t.acknowledged);
        evicted.appendInt64(t.evicted);
    }

    if (Status st = session.prepareOnce(UpdatesStatementName, UpdatesStatement); !st)
        return st;

    const QList<QByteArray> arrays = {
        ids.finish(),        delivered.finish(), acknowledged.finish(),    evicted.finish(),
        goneQueues.finish(), goneIds.finish(),   deliveredQueues.finish(), deliveredIds.finish()};
    const pq::Api &api = *link.api;
    pq::Connection *connection = link.connection;
    QString error;
    if (session.updatesOnly()) {
        if (!runCommand(api, pq::execPrepared(link, UpdatesStatementName, arrays), &error))
            return failure(error);
        return success();
    }
    if (!runCommand(api,
                    api.execParams(connection, "BEGIN", 0, nullptr, nullptr, nullptr, nullptr, 0),
                    &error))
        return failure(error);
    const bool written =
        runCommand(api,
                   api.execParams(connection, TransactionSettings, 0, nullptr, nullptr, nullptr,
                                  nullptr, 0),
                   &error, pq::TuplesOk) &&
        runCommand(api, pq::execPrepared(link, UpdatesStatementName, arrays), &error) &&
        runCommand(api,
                   api.execParams(connection, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0),
                   &error);
    if (!written) {
        QString ignored;
        runCommand(api,
                   api.execParams(connection, "ROLLBACK", 0, nullptr, nullptr, nullptr, nullptr, 0),
                   &ignored);
        return failure(error);
    }
    return success();
}

// Fire-and-forget state: no reason to wait for the disk, and the publish commits that share
// the log should not queue behind it. A crash of the machine (not of the broker) can lose the
// last of these, which means a redelivery: at-least-once still holds.
template <typename Write> Status relaxed(SqlSession &session, Write write)
{
    const Dialect &dialect = session.dialect();
    if (!dialect.relaxedBefore.isEmpty())
        (void)session.exec(dialect.relaxedBefore);
    const Status st = write();
    if (!dialect.relaxedAfter.isEmpty())
        (void)session.exec(dialect.relaxedAfter);
    return st;
}

// --- SQLite: prepared statements, a row at a time ---------------------------------------
//
// In-process, a statement per row costs no round trip, and each of these finds its row by
// index. The text path below does not on SQLite: it answers "(queue, message_id) IN (VALUES
// ...)" by scanning all of queue_entries, once per batch, so a batch cost grew with the queue's
// length (tst_deliveryupdates), and parsing the batch's SQL text was a tenth of the storage
// thread (bench/README.md, "SQLite: delivery updates by index"). The groups run in the text
// path's order: deliveries, then acknowledgements, then evictions.

struct SqliteStatements
{
    SqliteRowStatement entryDelivered, firstDelivery, deleteOwnEntry, deleteEntry, acknowledged,
        evicted, orphanBody;
};

Status prepareSqlite(SqlSession &session, SqliteStatements &q)
{
    const std::pair<SqliteRowStatement *, const char *> statements[] = {
        {&q.entryDelivered, "UPDATE queue_entries SET delivered = 1 "
                            "WHERE queue = ? AND message_id = ? AND delivered = 0"},
        // The first delivery wins; a message delivered again after a restart keeps its time.
        {&q.firstDelivery, "UPDATE message_metadata SET delivered_time = ?, "
                           "status = CASE WHEN status = 'sent' THEN 'delivered' ELSE status END "
                           "WHERE message_id = ? AND delivered_time IS NULL"},
        // An entry with its own envelope (a message held by one queue, migration 14) leaves no
        // shared body behind: one statement, where a delete and the body check below take two.
        {&q.deleteOwnEntry, "DELETE FROM queue_entries WHERE queue = ? AND message_id = ? "
                            "AND envelope IS NOT NULL"},
        {&q.deleteEntry, "DELETE FROM queue_entries WHERE queue = ? AND message_id = ?"},
        // Also the first delivery's time when the batch carries it (NULL otherwise): a prompt
        // ack arrives in the same batch as its delivery, and one update of the row does both.
        {&q.acknowledged, "UPDATE message_metadata SET "
                          "delivered_time = COALESCE(delivered_time, ?), "
                          "acknowledged_time = ?, status = 'acknowledged' WHERE message_id = ?"},
        // An ack from another queue is the stronger fact; do not turn it back into Evicted.
        {&q.evicted, "UPDATE message_metadata SET evicted_time = ?, "
                     "status = CASE WHEN status = 'acknowledged' THEN status ELSE 'evicted' END "
                     "WHERE message_id = ?"},
        // After the entry's delete: the body goes with the message's last entry.
        {&q.orphanBody, "DELETE FROM message_bodies WHERE message_id = ? AND NOT EXISTS "
                        "(SELECT 1 FROM queue_entries e WHERE e.message_id = ?)"},
    };
    for (const auto &[statement, sql] : statements) {
        if (Status st = statement->prepare(session, sql); !st)
            return st;
    }
    return success();
}

bool execWith(SqliteRowStatement &statement, const QString &first, const QString &second)
{
    statement.bind(0, first);
    statement.bind(1, second);
    return statement.exec();
}

// Deletes the entry, and its message's shared body if this was the body's last entry.
bool removeEntry(SqliteStatements &q, const QString &queue, const QString &messageId)
{
    if (!execWith(q.deleteOwnEntry, queue, messageId))
        return false;
    if (q.deleteOwnEntry.rowsAffected() > 0)
        return true;
    return execWith(q.deleteEntry, queue, messageId) &&
           execWith(q.orphanBody, messageId, messageId);
}

// Of the messages acknowledged in `updates`, the time of each one's first delivery in them
// (the first wins, as in the firstDelivery statement); a null string for those without one.
QHash<QString, QString> firstDeliveriesOfAcknowledged(const QList<DeliveryUpdate> &updates)
{
    QHash<QString, QString> first;
    for (const DeliveryUpdate &u : updates) {
        if (u.kind == Kind::Acknowledged)
            first.insert(u.messageId, QString());
    }
    for (const DeliveryUpdate &u : updates) {
        if (u.kind != Kind::Delivered)
            continue;
        if (const auto it = first.find(u.messageId); it != first.end() && it->isNull())
            *it = SqlSession::isoTime(u.at);
    }
    return first;
}

Status applySqliteRows(SqlSession &session, const QList<DeliveryUpdate> &updates)
{
    SqliteStatements q;
    if (Status st = prepareSqlite(session, q); !st)
        return st;
    const EntryKeys leaving = leavingEntries(updates);
    // A message acknowledged in this batch gets its first delivery's time from the
    // acknowledgement's update: one statement and one new row version less per message.
    const QHash<QString, QString> deliveredBeforeAck = firstDeliveriesOfAcknowledged(updates);
    auto apply = [&](const DeliveryUpdate &u) {
        const QString at = SqlSession::isoTime(u.at);
        switch (u.kind) {
        case Kind::Delivered:
            return (leaving.contains({u.queue, u.messageId}) ||
                    execWith(q.entryDelivered, u.queue, u.messageId)) &&
                   (deliveredBeforeAck.contains(u.messageId) ||
                    execWith(q.firstDelivery, at, u.messageId));
        case Kind::Acknowledged:
            q.acknowledged.bind(0, deliveredBeforeAck.value(u.messageId));
            q.acknowledged.bind(1, at);
            q.acknowledged.bind(2, u.messageId);
            return removeEntry(q, u.queue, u.messageId) && q.acknowledged.exec();
        case Kind::Evicted:
            return removeEntry(q, u.queue, u.messageId) && execWith(q.evicted, at, u.messageId);
        }
        return false;
    };
    if (Status st = session.begin(); !st)
        return st;
    for (Kind kind : {Kind::Delivered, Kind::Acknowledged, Kind::Evicted}) {
        for (const DeliveryUpdate &u : updates) {
            if (u.kind == kind && !apply(u)) {
                QString error;
                for (const SqliteRowStatement *statement :
                     {&q.entryDelivered, &q.firstDelivery, &q.deleteOwnEntry, &q.deleteEntry,
                      &q.acknowledged, &q.evicted, &q.orphanBody}) {
                    if (!statement->error().isEmpty())
                        error = statement->error();
                }
                session.rollback();
                return failure(error);
            }
        }
    }
    return session.commit();
}

} // namespace

const char *updatesOnlySessionSettings()
{
    return SessionSettings;
}

Status applyDeliveryUpdates(SqlSession &session, const QList<DeliveryUpdate> &updates)
{
    if (updates.isEmpty())
        return success();
    if (const pq::Link *link = session.libpq())
        return applyPostgresBinary(session, *link, updates);
    const Dialect &dialect = session.dialect();
    if (!dialect.isPostgres())
        return relaxed(session, [&] { return applySqliteRows(session, updates); });
    // PostgreSQL without libpq: the whole batch as one multi-statement script, one round trip.
    const Lists delivered = listsFor(session, updates, Kind::Delivered, leavingEntries(updates));
    const Lists acknowledged = listsFor(session, updates, Kind::Acknowledged);
    const Lists evicted = listsFor(session, updates, Kind::Evicted);

    QStringList statements;
    if (!delivered.pairs.isEmpty()) {
        statements << QStringLiteral("UPDATE queue_entries SET delivered = TRUE "
                                     "WHERE (queue, message_id) IN (VALUES ") +
                          delivered.pairs + u')';
    }
    if (!delivered.isEmpty()) {
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
    return relaxed(session, [&] {
        return session.execTransaction(dialect.relaxedTransactionPrefix + statements);
    });
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
