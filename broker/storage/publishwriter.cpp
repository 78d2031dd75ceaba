#include "publishwriter.h"

#include <QSqlError>
#include <QSqlQuery>

#include "libpq.h"
#include "sqliteapi.h"

namespace cmq::storage {

namespace {

// --- PostgreSQL: one statement, one round trip, one commit ---------------------------------
//
// Data-modifying CTEs all run to completion; `ins` yields only the ids that were new, and
// bodies and queue entries are written only for those. $1..$6 hold one element per candidate,
// $7..$9 one per target queue, $10 is the commit token. A message routed to one queue carries
// its envelope in that queue entry ($9) and has no message_bodies row; one routed to several
// has its envelope once in message_bodies ($6) and entries without one (migration 14). NULL
// elements say which: the other array holds the envelope. With libpq the statement is prepared
// once per connection and the arrays go in PostgreSQL's binary format: PostgreSQL neither lexes
// nor hex-decodes the envelopes, and plans once instead of per batch. Without libpq the same
// statement goes through QtSql with the arrays written as literals. Measured against the
// alternatives in docs/STORAGE.md.
//
// Most batches hold only new ids, so the statement is first run without `ON CONFLICT`: that
// clause costs every row a look-up of its key before the insert (which descends the same index
// again) and a confirmation record in the WAL; W=256 was 5-33% faster without it in six pairs
// (bench/README.md, "Publish: ON CONFLICT only when needed"). A batch that meets an existing id
// fails whole with a unique violation (one statement, its own transaction: nothing is left of
// it) and is run again with `ON CONFLICT DO NOTHING`, which tells the new ids from the others.
#define CMQ_PUBLISH_METADATA                                                                       \
    "WITH ins AS (INSERT INTO message_metadata (message_id, client_id, exchange, routing_key, "    \
    "sent_time, status, commit_token) SELECT m.id, m.sender, m.exchange, m.routing_key, "          \
    "timestamptz 'epoch' + m.sent_ms * interval '1 millisecond', 'sent', $10 "                     \
    "FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[]) "                     \
    "AS m (id, sender, exchange, routing_key, sent_ms) "
#define CMQ_PUBLISH_REST                                                                           \
    "RETURNING message_id), "                                                                      \
    "bodies AS (INSERT INTO message_bodies (message_id, envelope) SELECT b.id, b.envelope "        \
    "FROM unnest($1::text[], $6::bytea[]) AS b (id, envelope) JOIN ins ON ins.message_id = b.id "  \
    "WHERE b.envelope IS NOT NULL), "                                                              \
    "entries AS (INSERT INTO queue_entries (queue, message_id, envelope) "                         \
    "SELECT t.queue, t.id, t.envelope FROM unnest($7::text[], $8::text[], $9::bytea[]) "           \
    "WITH ORDINALITY AS t (queue, id, envelope, ord) "                                             \
    "JOIN ins ON ins.message_id = t.id ORDER BY t.ord) "                                           \
    "SELECT message_id FROM ins"

// A statement without ON CONFLICT, run first, and its ON CONFLICT twin, each prepared by name.
struct PublishStatements
{
    const char *newName;
    const char *newText;
    const char *name;
    const char *text;
};
#define CMQ_PUBLISH_STATEMENTS(name, metadata, rest)                                               \
    {                                                                                              \
        name "_new", metadata rest, name, metadata "ON CONFLICT (message_id) DO NOTHING " rest     \
    }

constexpr PublishStatements BatchStatements =
    CMQ_PUBLISH_STATEMENTS("ciphermq_publish", CMQ_PUBLISH_METADATA, CMQ_PUBLISH_REST);
#undef CMQ_PUBLISH_METADATA
#undef CMQ_PUBLISH_REST

// A batch of one message routed to one queue (every batch at W=1, where one publisher waits for
// each confirm) has a statement of its own: scalar parameters, no arrays to unnest, no join, no
// sort, and no message_bodies ModifyTable (whose fence trigger fires even when it inserts
// nothing). PostgreSQL sets up a much smaller plan: pgbench on the broker's schema, one client,
// 0.32-0.37 ms a transaction against 0.46-0.51 ms for the array statement with one element
// (bench/README.md, "One message, one queue: a statement of its own"). $1..$6 are sent in
// binary (text and bytea travel as their bytes), $7 and $8 as text.
#define CMQ_PUBLISH_ONE_METADATA                                                                   \
    "WITH ins AS (INSERT INTO message_metadata (message_id, client_id, exchange, routing_key, "    \
    "sent_time, status, commit_token) VALUES ($1::text, $2::text, $3::text, $4::text, "            \
    "timestamptz 'epoch' + $7::int8 * interval '1 millisecond', 'sent', $8::int8) "
#define CMQ_PUBLISH_ONE_REST                                                                       \
    "RETURNING message_id) "                                                                       \
    "INSERT INTO queue_entries (queue, message_id, envelope) "                                     \
    "SELECT $5::text, message_id, $6::bytea FROM ins RETURNING message_id"
constexpr PublishStatements OneStatements =
    CMQ_PUBLISH_STATEMENTS("ciphermq_publish_one", CMQ_PUBLISH_ONE_METADATA, CMQ_PUBLISH_ONE_REST);
#undef CMQ_PUBLISH_ONE_METADATA
#undef CMQ_PUBLISH_ONE_REST
#undef CMQ_PUBLISH_STATEMENTS

const char UniqueViolation[] = "23505";

enum Column {
    Ids,
    Senders,
    Exchanges,
    RoutingKeys,
    SentTimes,
    SharedEnvelopes,
    TargetQueues,
    TargetIds,
    TargetEnvelopes
};
constexpr int ArrayParams = 9;

// Hands the candidates to `sink` column by column, in batch order.
template <typename Sink>
void collect(const QList<MessageRecord> &records, const PublishPlan &plan, Sink &sink)
{
    for (qsizetype index : plan.candidates) {
        const MessageRecord &record = records[index];
        sink.id(Ids, plan.ids[index], record.messageId); // validated UTF-8 in planPublish()
        sink.text(Senders, record.sender);
        sink.text(Exchanges, record.exchange);
        sink.text(RoutingKeys, record.routingKey);
        sink.integer(SentTimes, record.sentTime.toMSecsSinceEpoch());
        const bool shared = plan.queues[index].size() > 1;
        if (shared)
            sink.bytes(SharedEnvelopes, record.envelope);
        else
            sink.null(SharedEnvelopes);
        for (const QString &queue : plan.queues[index]) {
            sink.text(TargetQueues, queue);
            sink.id(TargetIds, plan.ids[index], record.messageId);
            if (shared)
                sink.null(TargetEnvelopes);
            else
                sink.bytes(TargetEnvelopes, record.envelope);
        }
    }
}

struct BinarySink
{
    pq::BinaryArray arrays[ArrayParams] = {
        pq::BinaryArray(pq::TextOid), pq::BinaryArray(pq::TextOid), pq::BinaryArray(pq::TextOid),
        pq::BinaryArray(pq::TextOid), pq::BinaryArray(pq::Int8Oid), pq::BinaryArray(pq::ByteaOid),
        pq::BinaryArray(pq::TextOid), pq::BinaryArray(pq::TextOid), pq::BinaryArray(pq::ByteaOid)};
    void id(Column c, const QString &, const QByteArray &utf8) { arrays[c].append(utf8); }
    void text(Column c, const QString &value) { arrays[c].append(value.toUtf8()); }
    void integer(Column c, qint64 value) { arrays[c].appendInt64(value); }
    void bytes(Column c, const QByteArray &value) { arrays[c].append(value); }
    void null(Column c) { arrays[c].appendNull(); }
};

// ARRAY[...] element lists; the statement's own casts ($1::text[]) give the empty ones a type.
struct LiteralSink
{
    const SqlSession &session;
    QString arrays[ArrayParams];
    void add(Column c, const QString &literal)
    {
        if (!arrays[c].isEmpty())
            arrays[c] += u',';
        arrays[c] += literal;
    }
    void id(Column c, const QString &value, const QByteArray &) { add(c, session.text(value)); }
    void text(Column c, const QString &value) { add(c, session.text(value)); }
    void integer(Column c, qint64 value) { add(c, SqlSession::integer(value)); }
    void bytes(Column c, const QByteArray &value) { add(c, session.bytes(value)); }
    void null(Column c) { add(c, QStringLiteral("NULL::bytea")); } // bytea columns only
};

class PostgresWriter : public PublishWriter
{
public:
    Result<QSet<QString>> write(SqlSession &s, const QList<MessageRecord> &records,
                                const PublishPlan &plan, qint64 commitToken) const override
    {
        if (const pq::Link *link = s.libpq())
            return writeBinary(s, *link, records, plan, commitToken);
        return writeLiterals(s, records, plan, commitToken);
    }

private:
    static Result<QSet<QString>> writeBinary(SqlSession &s, const pq::Link &link,
                                             const QList<MessageRecord> &records,
                                             const PublishPlan &plan, qint64 commitToken);
    static Result<QSet<QString>> writeLiterals(SqlSession &s, const QList<MessageRecord> &records,
                                               const PublishPlan &plan, qint64 commitToken);
    // Runs statements.newText; on a unique violation, its ON CONFLICT twin. The new ids.
    static Result<QSet<QString>> runPublish(SqlSession &s, const pq::Link &link,
                                            const PublishStatements &statements,
                                            const QList<QByteArray> &binary,
                                            const QList<QByteArray> &text);
};

Result<QSet<QString>> PostgresWriter::writeBinary(SqlSession &s, const pq::Link &link,
                                                  const QList<MessageRecord> &records,
                                                  const PublishPlan &plan, qint64 commitToken)
{
    const QList<QByteArray> token = {QByteArray::number(commitToken)};
    if (plan.candidates.size() == 1 && plan.queues[plan.candidates.first()].size() == 1) {
        const qsizetype index = plan.candidates.first();
        const MessageRecord &record = records[index];
        const QList<QByteArray> values = {record.messageId,
                                          record.sender.toUtf8(),
                                          record.exchange.toUtf8(),
                                          record.routingKey.toUtf8(),
                                          plan.queues[index].first().toUtf8(),
                                          record.envelope};
        const QList<QByteArray> text = {QByteArray::number(record.sentTime.toMSecsSinceEpoch()),
                                        token.first()};
        return runPublish(s, link, OneStatements, values, text);
    }

    BinarySink sink;
    collect(records, plan, sink);
    QList<QByteArray> arrays;
    arrays.reserve(ArrayParams);
    for (const pq::BinaryArray &array : sink.arrays)
        arrays.append(array.finish());
    return runPublish(s, link, BatchStatements, arrays, token);
}

Result<QSet<QString>> PostgresWriter::runPublish(SqlSession &s, const pq::Link &link,
                                                 const PublishStatements &statements,
                                                 const QList<QByteArray> &binary,
                                                 const QList<QByteArray> &text)
{
    using R = Result<QSet<QString>>;
    if (Status st = s.prepareOnce(statements.newName, statements.newText); !st)
        return R::failure(st.error());
    const pq::Api &api = *link.api;
    pq::ResultSet *result = pq::execPrepared(link, statements.newName, binary, text);
    if (result && api.resultStatus(result) != pq::TuplesOk &&
        qstrcmp(api.resultErrorField(result, 'C'), UniqueViolation) == 0) {
        // An id of the batch is in the database already: nothing of the batch was written.
        api.clear(result);
        if (Status st = s.prepareOnce(statements.name, statements.text); !st)
            return R::failure(st.error());
        result = pq::execPrepared(link, statements.name, binary, text);
    }
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

Result<QSet<QString>> PostgresWriter::writeLiterals(SqlSession &s,
                                                    const QList<MessageRecord> &records,
                                                    const PublishPlan &plan, qint64 commitToken)
{
    using R = Result<QSet<QString>>;
    LiteralSink sink{s, {}};
    collect(records, plan, sink);
    const char *statement = BatchStatements.text;
    qsizetype size = qstrlen(statement) + 32 + sink.arrays[Ids].size(); // $1 is used twice
    for (const QString &array : sink.arrays)
        size += array.size() + 8;
    QString sql;
    sql.reserve(size);
    // $1..$10 are the only '$' in the statement.
    for (const char *p = statement; *p; ++p) {
        if (*p != '$') {
            sql += QLatin1Char(*p);
            continue;
        }
        int param = 0;
        while (p[1] >= '0' && p[1] <= '9')
            param = param * 10 + (*++p - '0');
        if (--param < ArrayParams)
            sql += QStringLiteral("ARRAY[") + sink.arrays[param] + u']';
        else
            sql += SqlSession::integer(commitToken);
    }

    QSqlQuery query = s.newQuery();
    if (Status st = s.run(query, sql); !st)
        return R::failure(st.error());
    QSet<QString> inserted;
    while (query.next())
        inserted.insert(query.value(0).toString());
    if (Status st = s.finish(query); !st)
        return R::failure(st.error());
    return inserted;
}

// --- SQLite ---------------------------------------------------------------------------------
//
// SQLite runs in-process: prepared single-row statements with native binding are as fast as
// multi-row literals there, and need no chunking (see docs/STORAGE.md).
class SqliteWriter : public PublishWriter
{
public:
    Result<QSet<QString>> write(SqlSession &s, const QList<MessageRecord> &records,
                                const PublishPlan &plan, qint64 commitToken) const override;
};

Result<QSet<QString>> SqliteWriter::write(SqlSession &s, const QList<MessageRecord> &records,
                                          const PublishPlan &plan, qint64 commitToken) const
{
    using R = Result<QSet<QString>>;
    SqliteRowStatement metadata, body, entry;
    for (const auto &[statement, sql] :
         {std::pair{&metadata, "INSERT INTO message_metadata (message_id, client_id, exchange, "
                               "routing_key, sent_time, status, commit_token) "
                               "VALUES (?, ?, ?, ?, ?, 'sent', ?) "
                               "ON CONFLICT (message_id) DO NOTHING"},
          std::pair{&body, "INSERT INTO message_bodies (message_id, envelope) VALUES (?, ?)"},
          std::pair{&entry,
                    "INSERT INTO queue_entries (queue, message_id, envelope) VALUES (?, ?, ?)"}}) {
        if (Status st = statement->prepare(s, sql); !st)
            return R::failure(st.error());
    }

    if (Status st = s.begin(); !st)
        return R::failure(st.error());
    QSet<QString> inserted;
    auto failed = [&](const SqliteRowStatement &statement) {
        const QString error = statement.error();
        s.rollback();
        return R::failure(error);
    };
    for (qsizetype index : plan.candidates) {
        const MessageRecord &record = records[index];
        const QString &id = plan.ids[index];
        metadata.bind(0, id);
        metadata.bind(1, record.sender);
        metadata.bind(2, record.exchange);
        metadata.bind(3, record.routingKey);
        metadata.bind(4, SqlSession::isoTime(record.sentTime));
        metadata.bind(5, commitToken);
        if (!metadata.exec())
            return failed(metadata);
        if (metadata.rowsAffected() != 1)
            continue; // already in the database
        inserted.insert(id);
        // As on PostgreSQL: one queue, the envelope in its entry; several, one shared row.
        const bool shared = plan.queues[index].size() > 1;
        if (shared) {
            body.bind(0, id);
            body.bind(1, record.envelope);
            if (!body.exec())
                return failed(body);
        }
        for (const QString &queue : plan.queues[index]) {
            entry.bind(0, queue);
            entry.bind(1, id);
            entry.bind(2, shared ? QByteArray() : record.envelope);
            if (!entry.exec())
                return failed(entry);
        }
    }
    if (Status st = s.commit(); !st)
        return R::failure(st.error());
    return inserted;
}

} // namespace

const PublishWriter &publishWriterFor(const SqlSession &session)
{
    static const PostgresWriter postgres;
    static const SqliteWriter sqlite;
    if (session.dialect().isPostgres())
        return postgres;
    return sqlite;
}

} // namespace cmq::storage
