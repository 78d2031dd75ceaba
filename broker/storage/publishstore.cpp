#include "publishstore.h"

#include <QSqlError>
#include <QStringDecoder>

namespace cmq::storage {

namespace {

bool isValidUtf8(const QByteArray &bytes)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString decoded = decoder.decode(bytes);
    return !decoder.hasError();
}

QString invalidReason(const MessageRecord &record)
{
    const QChar nul(0);
    if (record.messageId.isEmpty())
        return QStringLiteral("empty message id");
    if (record.messageId.contains('\0') || !isValidUtf8(record.messageId))
        return QStringLiteral("message id is not valid UTF-8 text");
    if (record.sender.contains(nul) || record.exchange.contains(nul) ||
        record.routingKey.contains(nul))
        return QStringLiteral("sender, exchange or routing key contains a NUL character");
    if (record.queues.isEmpty())
        return QStringLiteral("unroutable: no target queue");
    for (const QString &queue : record.queues) {
        if (queue.isEmpty() || queue.contains(nul))
            return QStringLiteral("invalid target queue name");
    }
    if (!record.sentTime.isValid())
        return QStringLiteral("missing sent time");
    return {};
}

// PostgreSQL: the whole batch is one statement in autocommit mode, so one round trip and one
// commit. Data-modifying CTEs all run to completion; `ins` yields only the ids that were new,
// and bodies and queue entries are written only for those.
QString postgresStatement(SqlSession &s, const QList<MessageRecord> &records,
                          const PublishPlan &plan, qint64 commitToken)
{
    qsizetype estimate = 1024;
    for (qsizetype index : plan.candidates)
        estimate += 2 * records[index].envelope.size() + 256;
    QString sql;
    sql.reserve(estimate);

    const QString token = SqlSession::integer(commitToken);
    sql += QStringLiteral("WITH batch (message_id, client_id, exchange, routing_key, sent_time, "
                          "envelope) AS (VALUES ");
    QString targets;
    qint64 ordinal = 0;
    bool first = true;
    for (qsizetype index : plan.candidates) {
        const MessageRecord &record = records[index];
        const QString id = s.text(plan.ids[index]);
        if (!first)
            sql += u',';
        first = false;
        sql += u'(' + id + u',' + s.text(record.sender) + u',' + s.text(record.exchange) + u',' +
               s.text(record.routingKey) + u',' + s.time(record.sentTime) + u',' +
               s.bytes(record.envelope) + u')';
        for (const QString &queue : plan.queues[index]) {
            if (!targets.isEmpty())
                targets += u',';
            targets +=
                u'(' + SqlSession::integer(ordinal++) + u',' + s.text(queue) + u',' + id + u')';
        }
    }
    sql += QStringLiteral(
        "), ins AS (INSERT INTO message_metadata (message_id, client_id, exchange, routing_key, "
        "sent_time, status, commit_token) SELECT message_id, client_id, exchange, routing_key, "
        "sent_time, 'sent', ");
    sql += token;
    sql += QStringLiteral(
        " FROM batch ON CONFLICT (message_id) DO NOTHING RETURNING message_id), "
        "bodies AS (INSERT INTO message_bodies (message_id, envelope) SELECT b.message_id, "
        "b.envelope FROM batch b JOIN ins USING (message_id)), "
        "targets (ord, queue, message_id) AS (VALUES ");
    sql += targets;
    // ORDER BY ord: entry ids (bigserial) follow publish order, which recovery relies on.
    sql += QStringLiteral(
        "), entries AS (INSERT INTO queue_entries (queue, message_id) SELECT t.queue, "
        "t.message_id FROM targets t JOIN ins USING (message_id) ORDER BY t.ord) "
        "SELECT message_id FROM ins");
    return sql;
}

Result<QSet<QString>> writePostgres(SqlSession &s, const QList<MessageRecord> &records,
                                    const PublishPlan &plan, qint64 commitToken)
{
    QSqlQuery query = s.newQuery();
    if (Status st = s.run(query, postgresStatement(s, records, plan, commitToken)); !st)
        return Result<QSet<QString>>::failure(st.error());
    QSet<QString> inserted;
    while (query.next())
        inserted.insert(query.value(0).toString());
    if (Status st = s.finish(query); !st)
        return Result<QSet<QString>>::failure(st.error());
    return inserted;
}

// SQLite runs in-process: prepared single-row statements with native binding are as fast as
// multi-row literals there, and need no chunking (see docs/STORAGE.md).
Result<QSet<QString>> writeSqlite(SqlSession &s, const QList<MessageRecord> &records,
                                  const PublishPlan &plan, qint64 commitToken)
{
    using R = Result<QSet<QString>>;
    QSqlQuery metadata = s.newQuery();
    QSqlQuery body = s.newQuery();
    QSqlQuery entry = s.newQuery();
    const bool prepared =
        metadata.prepare(QStringLiteral(
            "INSERT INTO message_metadata (message_id, client_id, exchange, routing_key, "
            "sent_time, status, commit_token) VALUES (?, ?, ?, ?, ?, 'sent', ?) "
            "ON CONFLICT (message_id) DO NOTHING")) &&
        body.prepare(
            QStringLiteral("INSERT INTO message_bodies (message_id, envelope) VALUES (?, ?)")) &&
        entry.prepare(
            QStringLiteral("INSERT INTO queue_entries (queue, message_id) VALUES (?, ?)"));
    if (!prepared) {
        for (const QSqlQuery *q : {&metadata, &body, &entry}) {
            if (q->lastError().isValid())
                return R::failure(SqlSession::errorText(q->lastError()));
        }
    }

    if (Status st = s.begin(); !st)
        return R::failure(st.error());
    QSet<QString> inserted;
    auto failed = [&](const QSqlQuery &q) {
        const QString error = SqlSession::errorText(q.lastError());
        s.rollback();
        return R::failure(error);
    };
    for (qsizetype index : plan.candidates) {
        const MessageRecord &record = records[index];
        const QString &id = plan.ids[index];
        metadata.bindValue(0, id);
        metadata.bindValue(1, record.sender);
        metadata.bindValue(2, record.exchange);
        metadata.bindValue(3, record.routingKey);
        metadata.bindValue(4, record.sentTime.toUTC().toString(Qt::ISODateWithMs));
        metadata.bindValue(5, commitToken);
        if (!metadata.exec())
            return failed(metadata);
        if (metadata.numRowsAffected() != 1)
            continue; // already in the database
        inserted.insert(id);
        body.bindValue(0, id);
        body.bindValue(1, record.envelope);
        if (!body.exec())
            return failed(body);
        for (const QString &queue : plan.queues[index]) {
            entry.bindValue(0, queue);
            entry.bindValue(1, id);
            if (!entry.exec())
                return failed(entry);
        }
    }
    if (Status st = s.commit(); !st)
        return R::failure(st.error());
    return inserted;
}

} // namespace

PublishPlan planPublish(const QList<MessageRecord> &records)
{
    PublishPlan plan;
    plan.results.resize(records.size());
    plan.ids.resize(records.size());
    plan.queues.resize(records.size());
    QSet<QString> seen;
    for (qsizetype i = 0; i < records.size(); ++i) {
        const MessageRecord &record = records[i];
        if (const QString reason = invalidReason(record); !reason.isEmpty()) {
            plan.results[i] = {PublishOutcome::Failed, reason};
            continue;
        }
        plan.ids[i] = QString::fromUtf8(record.messageId);
        if (seen.contains(plan.ids[i])) {
            plan.results[i] = {PublishOutcome::Duplicate, {}};
            continue;
        }
        seen.insert(plan.ids[i]);
        QStringList queues;
        for (const QString &queue : record.queues) {
            if (!queues.contains(queue))
                queues.append(queue);
        }
        plan.queues[i] = queues;
        plan.candidates.append(i);
    }
    return plan;
}

Result<QSet<QString>> writePublishBatch(SqlSession &session, const QList<MessageRecord> &records,
                                        const PublishPlan &plan, qint64 commitToken)
{
    if (plan.candidates.isEmpty())
        return QSet<QString>();
    if (session.isPostgres())
        return writePostgres(session, records, plan, commitToken);
    return writeSqlite(session, records, plan, commitToken);
}

Result<InDoubtResolution> resolveInDoubt(SqlSession &session, const PublishPlan &plan,
                                         qint64 commitToken)
{
    using R = Result<InDoubtResolution>;
    InDoubtResolution resolution;
    if (plan.candidates.isEmpty())
        return resolution;
    QString list;
    for (qsizetype index : plan.candidates) {
        if (!list.isEmpty())
            list += u',';
        list += session.text(plan.ids[index]);
    }
    QSqlQuery query = session.newQuery();
    Status st = session.run(query, QStringLiteral("SELECT message_id, commit_token FROM "
                                                  "message_metadata WHERE message_id IN (") +
                                       list + u')');
    if (!st)
        return R::failure(st.error());
    while (query.next()) {
        const QString id = query.value(0).toString();
        const QVariant token = query.value(1);
        if (!token.isNull() && token.toLongLong() == commitToken)
            resolution.inserted.insert(id);
        else
            resolution.existing.insert(id);
    }
    if (st = session.finish(query); !st)
        return R::failure(st.error());
    return resolution;
}

void completePlan(PublishPlan &plan, const QSet<QString> &inserted)
{
    for (qsizetype index : plan.candidates) {
        plan.results[index] = inserted.contains(plan.ids[index])
                                  ? PublishResult{PublishOutcome::Stored, {}}
                                  : PublishResult{PublishOutcome::Duplicate, {}};
    }
}

} // namespace cmq::storage
