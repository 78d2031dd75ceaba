#include "deadletterstore.h"

#include <QHash>
#include <QSqlQuery>

#include "backlogstore.h"

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
        // An entry that carries its own envelope (a message held by one queue, migration 14)
        // hands it to message_bodies before it goes, and the moved entries read it from there
        // like those of a message held by several queues: a move is rare, and this way a move to
        // several queues, or back into the queue it came from, needs no other case.
        statements << QStringLiteral("INSERT INTO message_bodies (message_id, envelope) "
                                     "SELECT message_id, envelope FROM queue_entries") +
                          entryKey(s, move.fromQueue, move.messageId) +
                          QStringLiteral(" AND envelope IS NOT NULL "
                                         "ON CONFLICT (message_id) DO NOTHING");
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

Result<QList<RequeuedBacklog>> requeueBacklogDeadLetters(SqlSession &session, const QString &queue,
                                                          qint64 afterEntryId,
                                                          const QByteArray &fromMessageId)
{
    using R = Result<QList<RequeuedBacklog>>;
    const QString queueLiteral = session.text(queue);
    // Read, then moved by moveEntries() in one transaction; this worker is the only writer in
    // between, so nothing changes the selection meanwhile.
    QSqlQuery query = session.newQuery(true);
    Status st = session.run(
        query,
        QStringLiteral("SELECT e.message_id, d.original_queue, LENGTH(") +
            QLatin1StringView(EntryEnvelope) +
            QStringLiteral(") FROM queue_entries e JOIN dead_letters d ON d.queue = e.queue AND "
                           "d.message_id = e.message_id JOIN queues q ON q.name = "
                           "d.original_queue WHERE e.queue = ") +
            queueLiteral + QStringLiteral(" AND ") + QLatin1StringView(EntryHasEnvelope) +
            QStringLiteral(" AND ") +
            backlogStart(session, queue, afterEntryId, fromMessageId) +
            QStringLiteral(" AND d.original_queue <> ") + queueLiteral +
            QStringLiteral(" AND NOT EXISTS (SELECT 1 FROM queue_entries t WHERE t.queue = "
                           "d.original_queue AND t.message_id = e.message_id) ORDER BY e.id"));
    if (!st)
        return R::failure(st.error());
    QList<EntryMove> moves;
    QList<RequeuedBacklog> targets;
    QHash<QString, qsizetype> targetIndex;
    while (query.next()) {
        const QByteArray id = query.value(0).toString().toUtf8();
        const QString original = query.value(1).toString();
        moves.append(EntryMove{queue, id, {original}, {}, {}, {}, 0});
        auto it = targetIndex.constFind(original);
        if (it == targetIndex.cend()) {
            it = targetIndex.insert(original, targets.size());
            targets.append(RequeuedBacklog{original, 0, 0, id});
        }
        ++targets[*it].messages;
        targets[*it].bytes += query.value(2).toLongLong();
    }
    if (st = session.finish(query); !st)
        return R::failure(st.error());
    if (st = moveEntries(session, moves); !st)
        return R::failure(st.error());
    return targets;
}

Status purgeFinishedDeadLetters(SqlSession &session)
{
    return session.exec(QStringLiteral(
        "DELETE FROM dead_letters WHERE NOT EXISTS (SELECT 1 FROM queue_entries e WHERE "
        "e.queue = dead_letters.queue AND e.message_id = dead_letters.message_id)"));
}

} // namespace cmq::storage
