#include "recovery.h"

#include <QElapsedTimer>
#include <QHash>
#include <QSqlQuery>
#include <QtEndian>

#include "backlogstore.h"
#include "deadletterstore.h"
#include "libpq.h"
#include "storagelog.h"

namespace cmq::storage {

namespace {

// The envelope from the entry or the shared row (backlogstore.h).
QString entriesQuery()
{
    return QStringLiteral(
               "SELECT e.queue, e.message_id, m.client_id, m.exchange, m.routing_key, ") +
           QLatin1StringView(EntryEnvelope) +
           QStringLiteral(", m.sent_time, e.delivered FROM queue_entries e "
                          "JOIN message_metadata m ON m.message_id = e.message_id WHERE ") +
           QLatin1StringView(EntryHasEnvelope) + QStringLiteral(" ORDER BY e.id");
}

template <typename Row> Status forEachRow(SqlSession &session, const QString &sql, Row &&row)
{
    QSqlQuery query = session.newQuery(true);
    if (Status st = session.run(query, sql); !st)
        return st;
    while (query.next())
        row(query);
    return session.finish(query);
}

// Queue names, senders, exchanges and routing keys repeat across a million entries; sharing one
// QString per distinct value (implicit sharing) saves a few hundred bytes per entry. Bounded, so
// a value that never repeats does not grow the pool without end.
class StringPool
{
public:
    QString get(QByteArrayView utf8)
    {
        const auto it = m_pool.constFind(QByteArray::fromRawData(utf8.data(), utf8.size()));
        if (it != m_pool.cend())
            return *it;
        QString value = QString::fromUtf8(utf8);
        if (m_pool.size() < MaxValues)
            m_pool.insert(utf8.toByteArray(), value);
        return value;
    }
    QString get(const QString &value)
    {
        const QByteArray key = value.toUtf8();
        return get(QByteArrayView(key));
    }

private:
    static constexpr qsizetype MaxValues = 10000;
    QHash<QByteArray, QString> m_pool;
};

// Entries of one message in several queues are written together, so they come out together:
// they share one envelope buffer.
class EntryBuilder
{
public:
    explicit EntryBuilder(QList<QueueEntry> &entries) : m_entries(entries) {}

    template <typename Envelope> // reads the envelope only for the first entry of a message
    void add(QString queue, QByteArrayView messageId, QString sender, QString exchange,
             QString routingKey, const Envelope &envelope, QDateTime sentTime, bool delivered)
    {
        QueueEntry entry;
        entry.queue = std::move(queue);
        entry.messageId = messageId.toByteArray();
        entry.sender = std::move(sender);
        entry.exchange = std::move(exchange);
        entry.routingKey = std::move(routingKey);
        if (entry.messageId != m_lastId) {
            m_lastId = entry.messageId;
            m_lastEnvelope = envelope();
        }
        entry.envelope = m_lastEnvelope;
        entry.sentTime = std::move(sentTime);
        entry.redelivered = delivered; // delivered before the restart, never acknowledged
        m_entries.append(std::move(entry));
    }

    StringPool strings;

private:
    QList<QueueEntry> &m_entries;
    QByteArray m_lastId;
    QByteArray m_lastEnvelope;
};

Status loadEntriesQtSql(SqlSession &session, EntryBuilder &builder)
{
    return forEachRow(session, entriesQuery(), [&](const QSqlQuery &q) {
        builder.add(
            builder.strings.get(q.value(0).toString()), q.value(1).toString().toUtf8(),
            builder.strings.get(q.value(2).toString()), builder.strings.get(q.value(3).toString()),
            builder.strings.get(q.value(4).toString()), [&] { return q.value(5).toByteArray(); },
            session.toTime(q.value(6)), q.value(7).toBool());
    });
}

// PostgreSQL through libpq: a cursor fetched in binary, so envelopes arrive as raw bytes (QPSQL
// asks for bytea in escape format and unescapes every value), times as integers, and rows in
// blocks of FetchRows instead of one result object per row.
Status loadEntriesLibpq(SqlSession &session, const pq::Api &api, pq::Connection *connection,
                        EntryBuilder &builder)
{
    constexpr int FetchRows = 10000;
    // PostgreSQL's binary timestamptz: microseconds since 2000-01-01T00:00:00Z.
    constexpr qint64 PostgresEpochMs = 946684800000;
    if (Status st = session.exec(QStringLiteral("BEGIN")); !st)
        return st;
    // No JIT for this one-off scan: the session has it off (dialect.cpp).
    Status st = session.exec(QStringLiteral("DECLARE ciphermq_recovery NO SCROLL CURSOR FOR ") +
                             entriesQuery());
    const QByteArray fetch =
        "FETCH FORWARD " + QByteArray::number(FetchRows) + " FROM ciphermq_recovery";
    int rows = FetchRows;
    while (st && rows == FetchRows) {
        pq::ResultSet *result =
            api.execParams(connection, fetch.constData(), 0, nullptr, nullptr, nullptr, nullptr, 1);
        if (!result || api.resultStatus(result) != pq::TuplesOk) {
            st = failure(pq::errorText(api, result));
            if (result)
                api.clear(result);
            break;
        }
        rows = api.ntuples(result);
        for (int row = 0; row < rows; ++row) {
            auto bytes = [&](int column) {
                return QByteArrayView(api.getvalue(result, row, column),
                                      api.getlength(result, row, column));
            };
            const qint64 sentUs = qFromBigEndian<qint64>(api.getvalue(result, row, 6));
            builder.add(
                builder.strings.get(bytes(0)), bytes(1), builder.strings.get(bytes(2)),
                builder.strings.get(bytes(3)), builder.strings.get(bytes(4)),
                [&] { return bytes(5).toByteArray(); },
                QDateTime::fromMSecsSinceEpoch(PostgresEpochMs + sentUs / 1000, Qt::UTC),
                *api.getvalue(result, row, 7) != 0);
        }
        api.clear(result);
    }
    if (st)
        st = session.exec(QStringLiteral("COMMIT"));
    else
        (void)session.exec(QStringLiteral("ROLLBACK"));
    return st;
}

} // namespace

// Each queue's head only: start-up time and memory follow the number of queues and the window,
// not the backlog (docs/STORAGE.md, "Recovery at start-up"). With `countNow` every queue's
// entries are counted first (0.6 s per million entries); without, a queue whose head fills the
// window is listed in RecoveredState::uncounted and counted later in the background
// (backlogcounter.h), and the others are exact: their head is all they hold.
Status loadQueueHeads(SqlSession &session, int window, bool countNow, RecoveredState &state)
{
    QElapsedTimer timer;
    timer.start();
    if (countNow) {
        Result<QList<QueueBacklog>> backlogs = countQueueEntries(session);
        if (!backlogs)
            return failure(backlogs.error());
        state.backlogs = std::move(backlogs.value());
    } else {
        for (const QueueRecord &queue : std::as_const(state.queues))
            state.backlogs.append({queue.name, 0, 0});
    }
    const qint64 countMs = timer.elapsed();
    QList<QueueBacklog> heads;
    for (QueueBacklog &backlog : state.backlogs) {
        Result<QueuePage> head = loadQueuePage(session, backlog.queue, 0, {}, window);
        if (!head)
            return failure(head.error());
        const QList<QueueEntry> &entries = head.value().entries;
        qint64 headBytes = 0;
        for (const QueueEntry &entry : entries)
            headBytes += entry.envelope.size();
        if (!countNow) {
            if (entries.size() >= window)
                state.uncounted.append(backlog.queue);
            else if (!entries.isEmpty())
                heads.append({backlog.queue, entries.size(), headBytes});
        } else {
            // The head's bytes exactly; the rest estimated from the head's average size. Pages
            // subtract what they actually hold, so the figure is exact again once the queue has
            // drained past the head it was estimated from (docs/STORAGE.md).
            const qint64 rest = backlog.messages - entries.size();
            backlog.bytes = headBytes + (entries.isEmpty() ? 0 : rest * headBytes / entries.size());
        }
        state.entries += std::move(head.value().entries);
    }
    if (!countNow)
        state.backlogs = std::move(heads);
    if (countNow)
        qCInfo(lcStorage, "queue backlogs counted in %lld ms, heads read in %lld ms", countMs,
               timer.elapsed() - countMs);
    else
        qCInfo(lcStorage, "queue heads read in %lld ms; %lld queues with more to count",
               timer.elapsed(), qint64(state.uncounted.size()));
    return success();
}

Result<RecoveredState> loadState(SqlSession &session, int windowPerQueue, bool countBacklogs)
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
                    QStringLiteral("SELECT name, owner, max_length, overflow, message_ttl_ms, "
                                   "dead_letter_exchange, dead_letter_routing_key, "
                                   "delivery_limit, dead_letter_overflow "
                                   "FROM queues ORDER BY name"),
                    [&](const QSqlQuery &q) {
                        state.queues.append({q.value(0).toString(), q.value(1).toString(),
                                             q.value(2).toLongLong(), q.value(3).toString(),
                                             q.value(4).toLongLong(), q.value(5).toString(),
                                             q.value(6).toString(), q.value(7).toLongLong(),
                                             q.value(8).toLongLong() != 0});
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

    if (windowPerQueue > 0) {
        if (st = loadQueueHeads(session, windowPerQueue, countBacklogs, state); !st)
            return R::failure(QStringLiteral("cannot load queue heads: %1").arg(st.error()));
        qCInfo(lcStorage,
               "recovered %lld exchanges, %lld queues, %lld bindings and the queues' heads: %lld "
               "messages loaded (%lld queues hold more, counted after start-up) in %lld ms",
               qint64(state.exchanges.size()), qint64(state.queues.size()),
               qint64(state.bindings.size()), qint64(state.entries.size()),
               qint64(state.uncounted.size()), timer.elapsed());
        return state;
    }

    // One allocation for the list instead of repeated growth by copying.
    st = forEachRow(session, QStringLiteral("SELECT COUNT(*) FROM queue_entries"),
                    [&](const QSqlQuery &q) { state.entries.reserve(q.value(0).toLongLong()); });
    EntryBuilder builder(state.entries);
    const pq::Link *link = session.libpq();
    if (st)
        st = link ? loadEntriesLibpq(session, *link->api, link->connection, builder)
                  : loadEntriesQtSql(session, builder);
    if (!st)
        return R::failure(QStringLiteral("cannot load queue entries: %1").arg(st.error()));

    Result<QList<DeadLetterEntry>> deadLetters = loadDeadLetters(session);
    if (!deadLetters)
        return R::failure(QStringLiteral("cannot load dead letters: %1").arg(deadLetters.error()));
    state.deadLetters = std::move(deadLetters.value());

    qCInfo(lcStorage,
           "recovered %lld exchanges, %lld queues, %lld bindings and %lld queued messages in "
           "%lld ms",
           qint64(state.exchanges.size()), qint64(state.queues.size()),
           qint64(state.bindings.size()), qint64(state.entries.size()), timer.elapsed());
    return state;
}

} // namespace cmq::storage
