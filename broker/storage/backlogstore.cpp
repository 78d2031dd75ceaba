#include "backlogstore.h"

#include <QSqlQuery>

#include "routerstore.h"

namespace cmq::storage {

void RouterStore::loadQueuePage(const QString &, qint64, const QByteArray &, int,
                                std::function<void(Result<QueuePage>)> done)
{
    done(QueuePage{});
}

void RouterStore::senderOfQueued(const QByteArray &,
                                 std::function<void(Result<std::optional<QString>>)> done)
{
    done(std::optional<QString>{});
}

void RouterStore::requeueBacklogDeadLetters(
    const QString &, qint64, const QByteArray &,
    std::function<void(Result<QList<RequeuedBacklog>>)> done)
{
    done(QList<RequeuedBacklog>{});
}

void RouterStore::countQueueBacklogs(std::function<void(Result<QList<QueueBacklog>>)> done)
{
    done(QList<QueueBacklog>{});
}

QString backlogStart(const SqlSession &session, const QString &queue, qint64 afterEntryId,
                     const QByteArray &fromMessageId)
{
    // A missing anchor matches nothing (NULL), never the entries already in memory.
    if (fromMessageId.isEmpty())
        return QStringLiteral("e.id > ") + SqlSession::integer(afterEntryId);
    return QStringLiteral("e.id >= (SELECT a.id FROM queue_entries a WHERE a.queue = ") +
           session.text(queue) + QStringLiteral(" AND a.message_id = ") +
           session.text(QString::fromUtf8(fromMessageId)) + u')';
}

Result<QList<QueueBacklog>> countQueueEntries(SqlSession &session)
{
    using R = Result<QList<QueueBacklog>>;
    // Counting reads the (queue, id) index only; summing envelope sizes would read every body
    // (a gigabyte per million 1 KB messages).
    QSqlQuery query = session.newQuery();
    Status st = session.run(
        query, QStringLiteral("SELECT queue, COUNT(*) FROM queue_entries GROUP BY queue"));
    QList<QueueBacklog> backlogs;
    if (st) {
        while (query.next())
            backlogs.append({query.value(0).toString(), query.value(1).toLongLong(), 0});
        st = session.finish(query);
    }
    if (!st)
        return R::failure(st.error());
    return backlogs;
}

Result<QueuePage> loadQueuePage(SqlSession &session, const QString &queue, qint64 afterEntryId,
                                const QByteArray &fromMessageId, int limit)
{
    using R = Result<QueuePage>;
    const QString queueLiteral = session.text(queue);
    const QString start = backlogStart(session, queue, afterEntryId, fromMessageId);
    // The page's entries first, by a range scan of the (queue, id) index (migration 10), then
    // their metadata, shared bodies and dead-letter records by key: a LIMIT inside a derived table
    // is not flattened, so the planner cannot choose to join whole tables first (with a million
    // rows in one queue it estimates the join over all of them and reads every body).
    const QString sql =
        QStringLiteral("SELECT e.id, e.message_id, m.client_id, m.exchange, m.routing_key, ") +
        QLatin1StringView(EntryEnvelope) +
        QStringLiteral(", m.sent_time, e.delivered, d.reason, d.original_queue, "
                       "d.dead_lettered_at, d.delivery_count FROM (SELECT id, message_id, "
                       "delivered, envelope FROM queue_entries e WHERE e.queue = ") +
        queueLiteral + QStringLiteral(" AND ") + start + QStringLiteral(" ORDER BY e.id LIMIT ") +
        SqlSession::integer(qMax(1, limit)) +
        QStringLiteral(") e JOIN message_metadata m ON m.message_id = e.message_id "
                       "LEFT JOIN dead_letters d ON d.queue = ") +
        queueLiteral + QStringLiteral(" AND d.message_id = e.message_id WHERE ") +
        QLatin1StringView(EntryHasEnvelope) + QStringLiteral(" ORDER BY e.id");
    QSqlQuery query = session.newQuery();
    Status st = session.run(query, sql);
    if (!st)
        return R::failure(st.error());
    QueuePage page;
    page.entries.reserve(limit);
    while (query.next()) {
        QueueEntry entry;
        entry.entryId = query.value(0).toLongLong();
        entry.queue = queue;
        entry.messageId = query.value(1).toString().toUtf8();
        entry.sender = query.value(2).toString();
        entry.exchange = query.value(3).toString();
        entry.routingKey = query.value(4).toString();
        entry.envelope = query.value(5).toByteArray();
        entry.sentTime = session.toTime(query.value(6));
        entry.redelivered = query.value(7).toBool();
        if (!query.value(8).isNull()) {
            entry.deadLetterReason = query.value(8).toString();
            entry.deadLetterOriginalQueue = query.value(9).toString();
            entry.deadLetteredAt = session.toTime(query.value(10));
            entry.deadLetterDeliveryCount = query.value(11).toLongLong();
        }
        page.entries.append(std::move(entry));
    }
    if (st = session.finish(query); !st)
        return R::failure(st.error());
    return page;
}

Result<std::optional<QString>> senderOfQueued(SqlSession &session, const QByteArray &messageId)
{
    using R = Result<std::optional<QString>>;
    QSqlQuery query = session.newQuery();
    Status st = session.run(
        query, QStringLiteral("SELECT m.client_id FROM message_metadata m WHERE m.message_id = ") +
                   session.text(QString::fromUtf8(messageId)) +
                   QStringLiteral(" AND EXISTS (SELECT 1 FROM queue_entries e "
                                  "WHERE e.message_id = m.message_id)"));
    if (!st)
        return R::failure(st.error());
    std::optional<QString> sender;
    if (query.next())
        sender = query.value(0).toString();
    if (st = session.finish(query); !st)
        return R::failure(st.error());
    return sender;
}

} // namespace cmq::storage
