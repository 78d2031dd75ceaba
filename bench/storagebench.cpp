// ciphermq-storage-bench: the storage-layer measurements quoted in docs/STORAGE.md, without
// the network (the broker-level figures come from ciphermq-bench). Needs a PostgreSQL server
// as the test fixture provides one; each function is one measurement:
//   bash tests/support/postgres.sh start /tmp/cmq-pg
//   CMQ_TEST_POSTGRES=/tmp/cmq-pg build/bench/ciphermq-storage-bench [writeShapes|groupCommit|recovery]
//   writeShapes  - ways of writing one publish batch (1 KB envelopes, one queue each)
//   groupCommit  - publish throughput through Storage with W publishes outstanding
//   recovery     - openAndRecover of CMQ_STORAGE_BENCH_ENTRIES (default 1,000,000) 1 KB messages

#include <functional>
#include <memory>

#include <sys/resource.h>
#include <unistd.h>

#include <QElapsedTimer>
#include <QFile>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include "storage/libpq.h"
#include "storage/publishstore.h"
#include "storage/sqlsession.h"
#include "storage/storage.h"
#include "testpostgres.h"

using namespace cmq;
using namespace cmq::storage;

namespace {

// A database for one measurement: SQLite file or fresh PostgreSQL database, with the schema.
class BenchDb
{
public:
    explicit BenchDb(const QString &driver) : m_postgres(driver == u"postgresql")
    {
        m_settings.driver = driver;
        if (m_postgres) {
            QString error;
            const test::PostgresServer server = test::fixturePostgres(&error);
            if (!server.isValid())
                qFatal("%s", qPrintable(error));
            m_pg = std::make_unique<test::TestDatabase>(server);
            m_settings.hosts = {server.host};
            m_settings.ports = {server.port};
            m_settings.user = server.user;
            m_settings.dbname = m_pg->name();
        } else {
            m_settings.path = m_dir.filePath(QStringLiteral("bench.db"));
        }
        Storage storage(m_settings, QByteArray(32, 'k')); // migrate
        if (!storage.openAndRecover())
            qFatal("cannot create the schema");
    }
    ~BenchDb()
    {
        if (!m_rawName.isEmpty()) {
            QSqlDatabase::database(m_rawName, false).close();
            QSqlDatabase::removeDatabase(m_rawName);
        }
    }

    const Config::Database &settings() const { return m_settings; }
    bool isPostgres() const { return m_postgres; }

    SqlSession session()
    {
        if (m_pg)
            return SqlSession(m_pg->connection(), postgresDialect());
        if (m_rawName.isEmpty()) {
            m_rawName = QStringLiteral("bench-%1").arg(quintptr(this));
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_rawName);
            db.setDatabaseName(m_settings.path);
            db.open();
            QSqlQuery(db).exec(QStringLiteral("PRAGMA synchronous=FULL"));
        }
        return SqlSession(QSqlDatabase::database(m_rawName), sqliteDialect());
    }

private:
    bool m_postgres;
    Config::Database m_settings;
    QTemporaryDir m_dir;
    std::unique_ptr<test::TestDatabase> m_pg;
    QString m_rawName;
};

int g_next = 0;

QList<MessageRecord> makeBatch(int size)
{
    QList<MessageRecord> batch;
    const QByteArray envelope = QByteArray(1024 - 40, 'x').prepend(R"({"ciphertext":")");
    for (int i = 0; i < size; ++i) {
        MessageRecord record;
        record.messageId = QByteArray("bench-") + QByteArray::number(g_next++);
        record.sender = QStringLiteral("publisher-svc-1");
        record.exchange = QStringLiteral("orders");
        record.routingKey = QStringLiteral("worker-svc-1");
        record.envelope = envelope + record.messageId + "\"}";
        record.sentTime = QDateTime::currentDateTimeUtc();
        record.queues = {QStringLiteral("worker-svc-1_queue")};
        batch << record;
    }
    return batch;
}

bool check(bool ok, const QSqlQuery &query)
{
    if (!ok)
        qWarning("%s", qPrintable(query.lastError().text()));
    return ok;
}

// QSqlQuery::execBatch: on QPSQL Qt emulates it with one EXECUTE (one round trip) per row.
bool writeExecBatch(SqlSession &s, const QList<MessageRecord> &batch)
{
    QVariantList ids, senders, exchanges, keys, times, envelopes, queues;
    for (const MessageRecord &r : batch) {
        ids << QString::fromUtf8(r.messageId);
        senders << r.sender;
        exchanges << r.exchange;
        keys << r.routingKey;
        times << r.sentTime.toString(Qt::ISODateWithMs);
        envelopes << r.envelope;
        queues << r.queues.first();
    }
    QSqlDatabase db = s.database();
    db.transaction();
    QSqlQuery m(db), b(db), e(db);
    bool ok = check(
        m.prepare(QStringLiteral("INSERT INTO message_metadata (message_id, client_id, exchange, "
                                 "routing_key, sent_time, status) VALUES (?, ?, ?, ?, ?, 'sent') "
                                 "ON CONFLICT (message_id) DO NOTHING")),
        m);
    m.addBindValue(ids);
    m.addBindValue(senders);
    m.addBindValue(exchanges);
    m.addBindValue(keys);
    m.addBindValue(times);
    ok = ok && check(m.execBatch(), m);
    ok = ok && check(b.prepare(QStringLiteral("INSERT INTO message_bodies VALUES (?, ?)")), b);
    b.addBindValue(ids);
    b.addBindValue(envelopes);
    ok = ok && check(b.execBatch(), b);
    ok = ok && check(e.prepare(QStringLiteral(
                         "INSERT INTO queue_entries (queue, message_id) VALUES (?, ?)")),
                     e);
    e.addBindValue(queues);
    e.addBindValue(ids);
    ok = ok && check(e.execBatch(), e);
    return ok && db.commit();
}

// Multi-row VALUES with bound placeholders: prepared per batch shape, three statements in an
// explicit transaction, chunked under the driver's parameter limit.
bool writeMultiRowBound(SqlSession &s, const QList<MessageRecord> &batch)
{
    const int maxParams = s.dialect().isPostgres() ? 65535 : 32766;
    QSqlDatabase db = s.database();
    db.transaction();
    auto insert = [&](const QString &head, const QString &row, int width, const QString &tail,
                      const std::function<void(QSqlQuery &, const MessageRecord &)> &bind) {
        const int perChunk = maxParams / width;
        for (qsizetype start = 0; start < batch.size(); start += perChunk) {
            const qsizetype n = qMin<qsizetype>(perChunk, batch.size() - start);
            QStringList rows(n, row);
            QSqlQuery q(db);
            if (!check(q.prepare(head + rows.join(u',') + tail), q))
                return false;
            for (qsizetype i = start; i < start + n; ++i)
                bind(q, batch[i]);
            if (!check(q.exec(), q))
                return false;
        }
        return true;
    };
    const bool ok =
        insert(QStringLiteral("INSERT INTO message_metadata (message_id, client_id, exchange, "
                              "routing_key, sent_time, status) VALUES "),
               QStringLiteral("(?, ?, ?, ?, ?, 'sent')"), 5,
               QStringLiteral(" ON CONFLICT (message_id) DO NOTHING"),
               [](QSqlQuery &q, const MessageRecord &r) {
                   q.addBindValue(QString::fromUtf8(r.messageId));
                   q.addBindValue(r.sender);
                   q.addBindValue(r.exchange);
                   q.addBindValue(r.routingKey);
                   q.addBindValue(r.sentTime.toString(Qt::ISODateWithMs));
               }) &&
        insert(QStringLiteral("INSERT INTO message_bodies (message_id, envelope) VALUES "),
               QStringLiteral("(?, ?)"), 2, {},
               [](QSqlQuery &q, const MessageRecord &r) {
                   q.addBindValue(QString::fromUtf8(r.messageId));
                   q.addBindValue(r.envelope);
               }) &&
        insert(QStringLiteral("INSERT INTO queue_entries (queue, message_id) VALUES "),
               QStringLiteral("(?, ?)"), 2, {}, [](QSqlQuery &q, const MessageRecord &r) {
                   q.addBindValue(r.queues.first());
                   q.addBindValue(QString::fromUtf8(r.messageId));
               });
    return ok && db.commit();
}

// PostgreSQL arrays + unnest, as the seed's batched update: one statement, arrays as literals.
bool writeUnnest(SqlSession &s, const QList<MessageRecord> &batch)
{
    auto array = [&](const QStringList &items) {
        QString out = QStringLiteral("{");
        for (qsizetype i = 0; i < items.size(); ++i) {
            QString item = items[i];
            item.replace(u'\\', QStringLiteral("\\\\")).replace(u'"', QStringLiteral("\\\""));
            out += (i ? QStringLiteral(",\"") : QStringLiteral("\"")) + item + u'"';
        }
        return s.text(out + u'}');
    };
    QStringList ids, senders, exchanges, keys, times, envelopes, queues;
    for (const MessageRecord &r : batch) {
        ids << QString::fromUtf8(r.messageId);
        senders << r.sender;
        exchanges << r.exchange;
        keys << r.routingKey;
        times << r.sentTime.toString(Qt::ISODateWithMs);
        envelopes << QStringLiteral("\\x") + QString::fromLatin1(r.envelope.toHex());
        queues << r.queues.first();
    }
    const QString sql =
        QStringLiteral("WITH batch AS (SELECT * FROM unnest(") + array(ids) + "::text[]," +
        array(senders) + "::text[]," + array(exchanges) + "::text[]," + array(keys) + "::text[]," +
        array(times) + "::timestamptz[]," + array(envelopes) + "::bytea[]," + array(queues) +
        "::text[]) AS b(message_id, client_id, exchange, routing_key, sent_time, envelope, "
        "queue)), "
        "ins AS (INSERT INTO message_metadata (message_id, client_id, exchange, routing_key, "
        "sent_time, status) SELECT message_id, client_id, exchange, routing_key, sent_time, "
        "'sent' FROM batch ON CONFLICT (message_id) DO NOTHING RETURNING message_id), "
        "bodies AS (INSERT INTO message_bodies SELECT b.message_id, b.envelope FROM batch b "
        "JOIN ins USING (message_id)) "
        "INSERT INTO queue_entries (queue, message_id) SELECT b.queue, b.message_id FROM "
        "batch b JOIN ins USING (message_id)";
    return bool(s.exec(sql));
}

// What Storage does (publishstore.cpp): on PostgreSQL one prepared statement with binary
// array parameters through libpq.
bool writeImplemented(SqlSession &s, const QList<MessageRecord> &batch)
{
    const PublishPlan plan = planPublish(batch);
    const auto written = writePublishBatch(s, batch, plan, 1);
    if (!written)
        qWarning("%s", qPrintable(written.error()));
    return written && written->size() == batch.size();
}

// CPU seconds used so far by this process (all threads), and by one PostgreSQL server process:
// on a shared, loaded machine these say more than wall time about what the work costs.
double processCpu()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
           (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double serverProcessCpu(int pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (pid <= 0 || !stat.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray text = stat.readAll();
    // Fields after the ")" that ends the command name: utime and stime are the 12th and 13th.
    const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
    return (fields.value(11).toLongLong() + fields.value(12).toLongLong()) /
           double(sysconf(_SC_CLK_TCK));
}

int backendPid(SqlSession &session, const QString &where)
{
    QSqlQuery query(session.database());
    if (!query.exec(QStringLiteral("SELECT pid FROM pg_stat_activity WHERE ") + where) ||
        !query.next())
        return 0;
    return query.value(0).toInt();
}

// Storage's fallback on PostgreSQL when libpq cannot be resolved: the same statement as one
// QtSql query with the arrays formatted in as literals. The session decides when it is made;
// writeShapes() makes this one with libpq switched off.
bool writeQtSqlStatement(SqlSession &s, const QList<MessageRecord> &batch)
{
    return writeImplemented(s, batch);
}

qint64 rssKb(const char *field)
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith(field))
            return line.mid(qstrlen(field)).trimmed().split(' ').value(0).toLongLong();
    }
    return -1;
}

} // namespace

class tst_StorageBench : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void writeShapes_data();
    void writeShapes();
    void groupCommit_data();
    void groupCommit();
    void recovery_data();
    void recovery();
};

void tst_StorageBench::writeShapes_data()
{
    QTest::addColumn<QString>("driver");
    QTest::addColumn<QString>("shape");
    for (const char *driver : {"postgresql", "sqlite"}) {
        QStringList shapes = {"execBatch", "multi-row bound", "implemented"};
        if (qstrcmp(driver, "postgresql") == 0)
            shapes = QStringList{"execBatch", "multi-row bound", "unnest", "qtsql statement",
                                 "implemented"};
        for (const QString &shape : shapes)
            QTest::addRow("%s %s", driver, qPrintable(shape)) << driver << shape;
    }
}

void tst_StorageBench::writeShapes()
{
    QFETCH(QString, driver);
    QFETCH(QString, shape);
    const QMap<QString, std::function<bool(SqlSession &, const QList<MessageRecord> &)>> writers = {
        {"execBatch", writeExecBatch},
        {"multi-row bound", writeMultiRowBound},
        {"unnest", writeUnnest},
        {"qtsql statement", writeQtSqlStatement},
        {"implemented", writeImplemented}};
    for (int batchSize : {1, 16, 256, 1024}) {
        BenchDb db(driver);
        pq::setEnabled(shape != u"qtsql statement");
        SqlSession session = db.session();
        pq::setEnabled(true);
        const int server =
            db.isPostgres() ? backendPid(session, QStringLiteral("pid = pg_backend_pid()")) : 0;
        const int total = batchSize == 1 ? 300 : batchSize == 16 ? 3200 : 16384;
        const QList<QList<MessageRecord>> batches = [&] {
            QList<QList<MessageRecord>> all;
            for (int done = 0; done < total; done += batchSize)
                all << makeBatch(batchSize);
            return all;
        }();
        const double clientBefore = processCpu();
        const double serverBefore = serverProcessCpu(server);
        QElapsedTimer timer;
        timer.start();
        for (const QList<MessageRecord> &batch : batches)
            QVERIFY(writers[shape](session, batch));
        const double seconds = timer.nsecsElapsed() / 1e9;
        qInfo("%-10s %-16s batch %4d: %7.0f msg/s  %6.1f us client CPU + %6.1f us server CPU "
              "per message",
              qPrintable(driver), qPrintable(shape), batchSize, total / seconds,
              (processCpu() - clientBefore) * 1e6 / total,
              (serverProcessCpu(server) - serverBefore) * 1e6 / total);
    }
}

void tst_StorageBench::groupCommit_data()
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("postgresql") << QStringLiteral("postgresql");
    QTest::newRow("sqlite") << QStringLiteral("sqlite");
}

// W publishers each with one publish outstanding: the storage layer's own ceiling, without
// network, TLS or routing.
void tst_StorageBench::groupCommit()
{
    QFETCH(QString, driver);
    for (int window : {1, 16, 256}) {
        BenchDb db(driver);
        Storage storage(db.settings(), QByteArray(32, 'k'));
        QVERIFY(storage.openAndRecover());
        const int total = window == 1 ? 2000 : 30000;
        int issued = 0;
        int stored = 0;
        std::function<void()> issue = [&] {
            if (issued >= total)
                return;
            ++issued;
            storage.publish(makeBatch(1), [&](QList<PublishResult> results) {
                stored += results.value(0).outcome == PublishOutcome::Stored;
                issue();
            });
        };
        QElapsedTimer timer;
        timer.start();
        for (int i = 0; i < window; ++i)
            issue();
        QTRY_COMPARE_WITH_TIMEOUT(stored, total, 600000);
        const double seconds = timer.nsecsElapsed() / 1e9;
        const Storage::Stats stats = storage.stats();
        qInfo("%-10s W=%-4d %7.0f msg/s  %6llu transactions, %6.1f records each, commit %.2f ms "
              "avg / %.2f ms max",
              qPrintable(driver), window, total / seconds, stats.publishBatches,
              double(stats.publishRecords) / stats.publishBatches,
              stats.totalCommitMs / stats.publishBatches, stats.maxCommitMs);
    }
}

void tst_StorageBench::recovery_data()
{
    groupCommit_data();
}

void tst_StorageBench::recovery()
{
    QFETCH(QString, driver);
    const int entries = qEnvironmentVariableIntValue("CMQ_STORAGE_BENCH_ENTRIES") > 0
                            ? qEnvironmentVariableIntValue("CMQ_STORAGE_BENCH_ENTRIES")
                            : 1000000;
    BenchDb db(driver);
    {
        SqlSession session = db.session();
        QElapsedTimer fill;
        fill.start();
        for (int done = 0; done < entries; done += 1024)
            QVERIFY(writeImplemented(session, makeBatch(qMin(1024, entries - done))));
        qInfo("%s: wrote %d queued 1 KB messages in %.1f s", qPrintable(driver), entries,
              fill.nsecsElapsed() / 1e9);
    }
    const qint64 rssBefore = rssKb("VmRSS:");
    const double clientBefore = processCpu();
    Storage storage(db.settings(), QByteArray(32, 'k'));
    QElapsedTimer timer;
    timer.start();
    const Result<RecoveredState> state = storage.openAndRecover();
    const double seconds = timer.nsecsElapsed() / 1e9;
    const double clientCpu = processCpu() - clientBefore;
    QVERIFY(state);
    QCOMPARE(state->entries.size(), entries);
    double serverCpu = 0;
    if (db.isPostgres()) {
        // The storage's own connection has done nothing but migrate and load so far.
        SqlSession session = db.session();
        serverCpu = serverProcessCpu(
            backendPid(session, QStringLiteral("application_name = 'ciphermq-broker' AND datname = "
                                               "current_database()")));
    }
    qInfo("%s: openAndRecover of %d queued 1 KB messages: %.1f s (%.0f entries/s); CPU %.1f s "
          "client + %.1f s server; RSS +%lld MB",
          qPrintable(driver), entries, seconds, entries / seconds, clientCpu, serverCpu,
          (rssKb("VmRSS:") - rssBefore) / 1024);
}

QTEST_GUILESS_MAIN(tst_StorageBench)
#include "storagebench.moc"
