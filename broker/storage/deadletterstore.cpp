#include "deadletterstore.h"

#include <QSqlQuery>

namespace cmq::storage {

namespace {

QString entryKey(const SqlSession &s, const QString &queue, const QByteArray &messageId)
{
    return QStringLiteral(" WHERE queue = ") + s.text(queue) +
           QStringLiteral(" AND message_id = ") + s.text(QString::fromUtf8(messageId));
}

} // namespace

Status moveEntries(SqlSession &session, const QList<EntryMove> &moves)
{
    const SqlSession &s = session;
    QStringList statements;
    for (const EntryMove &move : moves) {
        const QString id = s.text(QString::fromUtf8(move.messageId));
        statements << QStringLiteral("DELETE FROM queue_entries") +
                          entryKey(s, move.fromQueue, move.messageId);
        statements << QStringLiteral("DELETE FROM dead_letters") +
                          entryKey(s, move.fromQueue, move.messageId);
        for (const QString &target : move.toQueues) {
            // A message already waiting in the target (it was routed there too) keeps that
            // one entry.
            statements << QStringLiteral("INSERT INTO queue_entries (queue, message_id) VALUES (") +
                              s.text(target) + u',' + id +
                              QStringLiteral(") ON CONFLICT (queue, message_id) DO NOTHING");
            if (move.reason.isEmpty()) {
                statements << QStringLiteral("DELETE FROM dead_letters") +
                                  entryKey(s, target, move.messageId);
                continue;
            }
            statements << QStringLiteral("INSERT INTO dead_letters (queue, message_id, reason, "
                                         "original_queue, dead_lettered_at, delivery_count) "
                                         "VALUES (") +
                              s.text(target) + u',' + id + u',' + s.text(move.reason) + u',' +
                              s.text(move.originalQueue) + u',' + s.time(move.at) + u',' +
                              SqlSession::integer(move.deliveryCount) +
                              QStringLiteral(") ON CONFLICT (queue, message_id) DO UPDATE SET "
                                             "reason = excluded.reason, original_queue = "
                                             "excluded.original_queue, dead_lettered_at = "
                                             "excluded.dead_lettered_at, delivery_count = "
                                             "excluded.delivery_count");
        }
        // Routed nowhere (its dead-letter exchange has no queue bound, or a requeue target
        // is gone): the envelope goes once no queue holds it, as after an eviction.
        statements << QStringLiteral("DELETE FROM message_bodies WHERE message_id = ") + id +
                          QStringLiteral(" AND NOT EXISTS (SELECT 1 FROM queue_entries e WHERE "
                                         "e.message_id = message_bodies.message_id)");
    }
    if (statements.isEmpty())
        return success();
    return session.execTransaction(statements);
}

Result<QList<DeadLetterEntry>> loadDeadLetters(SqlSession &session)
{
    QSqlQuery query = session.newQuery();
    Status st = session.run(
        query, QStringLiteral("SELECT d.queue, d.message_id, d.reason, d.original_queue, "
                              "d.dead_lettered_at, d.delivery_count FROM dead_letters d "
                              "JOIN queue_entries e ON e.queue = d.queue AND "
                              "e.message_id = d.message_id"));
    if (!st)
        return Result<QList<DeadLetterEntry>>::failure(st.error());
    QList<DeadLetterEntry> entries;
    while (query.next()) {
        entries.append(
            DeadLetterEntry{query.value(0).toString(), query.value(1).toString().toUtf8(),
                            query.value(2).toString(), query.value(3).toString(),
                            session.toTime(query.value(4)), query.value(5).toLongLong()});
    }
    if (st = session.finish(query); !st)
        return Result<QList<DeadLetterEntry>>::failure(st.error());
    return entries;
}

Status purgeFinishedDeadLetters(SqlSession &session)
{
    return session.exec(QStringLiteral(
        "DELETE FROM dead_letters WHERE NOT EXISTS (SELECT 1 FROM queue_entries e WHERE "
        "e.queue = dead_letters.queue AND e.message_id = dead_letters.message_id)"));
}

} // namespace cmq::storage
