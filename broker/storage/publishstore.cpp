#include "publishstore.h"

#include <QSqlError>
#include <QStringDecoder>

#include "libpq.h"

namespace cmq::storage {

namespace {

bool isValidUtf8(const QByteArray &bytes)
{
    QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString decoded = decoder.decode(bytes);
    return !decoder.hasError();
}

// Keys of the primary and unique indexes stay far below PostgreSQL's B-tree entry limit (about
// 2.7 kB), so one oversized record cannot fail the whole batch it shares with others.
constexpr qsizetype MaxKeyBytes = 1000;

QString invalidReason(const MessageRecord &record)
{
    const QChar nul(0);
    if (record.messageId.isEmpty())
        return QStringLiteral("empty message id");
    if (record.messageId.size() > MaxKeyBytes)
        return QStringLiteral("message id longer than %1 bytes").arg(MaxKeyBytes);
    if (record.messageId.contains('\0') || !isValidUtf8(record.messageId))
        return QStringLiteral("message id is not valid UTF-8 text");
    if (record.sender.contains(nul) || record.exchange.contains(nul) ||
        record.routingKey.contains(nul))
        return QStringLiteral("sender, exchange or routing key contains a NUL character");
    if (record.queues.isEmpty())
        return QStringLiteral("unroutable: no target queue");
    for (const QString &queue : record.queues) {
        if (queue.isEmpty() || queue.contains(nul) || queue.toUtf8().size() > MaxKeyBytes)
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

// The same statement with binary array parameters, prepared once per connection: PostgreSQL
// neither lexes nor hex-decodes the envelopes, and plans the statement once instead of per
// batch. One round trip, one commit. Measured against the alternatives in docs/STORAGE.md.
const char PublishStatementName[] = "ciphermq_publish";
const char PublishStatement[] =
    "WITH ins AS (INSERT INTO message_metadata (message_id, client_id, exchange, routing_key, "
    "sent_time, status, commit_token) SELECT m.id, m.sender, m.exchange, m.routing_key, "
    "timestamptz 'epoch' + m.sent_ms * interval '1 millisecond', 'sent', $9 "
    "FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[]) "
    "AS m (id, sender, exchange, routing_key, sent_ms) "
    "ON CONFLICT (message_id) DO NOTHING RETURNING message_id), "
    "bodies AS (INSERT INTO message_bodies (message_id, envelope) SELECT b.id, b.envelope "
    "FROM unnest($1::text[], $6::bytea[]) AS b (id, envelope) JOIN ins ON ins.message_id = b.id), "
    "entries AS (INSERT INTO queue_entries (queue, message_id) SELECT t.queue, t.id "
    "FROM unnest($7::text[], $8::text[]) WITH ORDINALITY AS t (queue, id, ord) "
    "JOIN ins ON ins.message_id = t.id ORDER BY t.ord) "
    "SELECT message_id FROM ins";

Result<QSet<QString>> writePostgresBinary(SqlSession &s, const pq::Api &api,
                                          pq::Connection *connection,
                                          const QList<MessageRecord> &records,
                                          const PublishPlan &plan, qint64 commitToken)
{
    using R = Result<QSet<QString>>;
    if (!s.isPrepared(PublishStatementName)) {
        pq::ResultSet *prepared =
            api.prepare(connection, PublishStatementName, PublishStatement, 0, nullptr);
        // 42P05: prepared earlier on this connection by another session object; same text.
        const bool ok = prepared && (api.resultStatus(prepared) == pq::CommandOk ||
                                     qstrcmp(api.resultErrorField(prepared, 'C'), "42P05") == 0);
        const QString error = ok ? QString() : pq::errorText(api, prepared);
        if (prepared)
            api.clear(prepared);
        if (!ok)
            return R::failure(error);
        s.setPrepared(PublishStatementName);
    }

    pq::BinaryArray ids(pq::TextOid), senders(pq::TextOid), exchanges(pq::TextOid),
        routingKeys(pq::TextOid), sentTimes(pq::Int8Oid), envelopes(pq::ByteaOid),
        targetQueues(pq::TextOid), targetIds(pq::TextOid);
    for (qsizetype index : plan.candidates) {
        const MessageRecord &record = records[index];
        ids.append(record.messageId); // validated UTF-8 in planPublish()
        senders.append(record.sender.toUtf8());
        exchanges.append(record.exchange.toUtf8());
        routingKeys.append(record.routingKey.toUtf8());
        sentTimes.appendInt64(record.sentTime.toMSecsSinceEpoch());
        envelopes.append(record.envelope);
        for (const QString &queue : plan.queues[index]) {
            targetQueues.append(queue.toUtf8());
            targetIds.append(record.messageId);
        }
    }
    const QByteArray arrays[] = {ids.finish(),          senders.finish(),   exchanges.finish(),
                                 routingKeys.finish(),  sentTimes.finish(), envelopes.finish(),
                                 targetQueues.finish(), targetIds.finish()};
    const QByteArray token = QByteArray::number(commitToken);
    constexpr int Params = 9;
    const char *values[Params];
    int lengths[Params];
    int formats[Params];
    for (int i = 0; i < Params - 1; ++i) {
        values[i] = arrays[i].constData();
        lengths[i] = int(arrays[i].size());
        formats[i] = 1; // binary
    }
    values[Params - 1] = token.constData();
    lengths[Params - 1] = 0;
    formats[Params - 1] = 0; // text

    pq::ResultSet *result =
        api.execPrepared(connection, PublishStatementName, Params, values, lengths, formats, 0);
    if (!result || api.resultStatus(result) != pq::TuplesOk) {
        const QString error = pq::errorText(api, result);
        if (result)
            api.clear(result);
        return R::failure(error);
    }
    QSet<QString> inserted;
    const int rows = api.ntuples(result);
    inserted.reserve(rows);
    for (int row = 0; row < rows; ++row) {
        inserted.insert(
            QString::fromUtf8(api.getvalue(result, row, 0), api.getlength(result, row, 0)));
    }
    api.clear(result);
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
    if (session.isPostgres()) {
        const pq::Api *api = pq::api();
        if (pq::Connection *connection = api ? pq::connectionOf(session.database()) : nullptr)
            return writePostgresBinary(session, *api, connection, records, plan, commitToken);
        return writePostgres(session, records, plan, commitToken);
    }
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
