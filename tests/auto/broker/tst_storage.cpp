// Storage against both drivers: schema migrations, the group-committed publish path and its
// deduplication, delivery updates and what they mean after a restart, queue deletes, the
// encrypted key directory and the retention purge. Every test runs on SQLite and on a fresh
// PostgreSQL database of its own.

#include <memory>
#include <numeric>
#include <optional>

#include <QDir>
#include <QSignalSpy>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include "storage/libpq.h"
#include "storage/migrations.h"
#include "storage/publishstore.h"
#include "storage/sqlsession.h"
#include "storage/storage.h"
#include "testenv.h"
#include "testpostgres.h"

using namespace cmq;
using namespace cmq::storage;

namespace {

constexpr int Timeout = 30000;

QByteArray aesKey(char fill = 'k')
{
    return QByteArray(32, fill);
}

// One database to test against: a SQLite file in a temporary directory, or a fresh database on
// the PostgreSQL fixture. raw() is a connection of the test's own for checking rows.
class Backend
{
public:
    // "postgresql-qtsql": PostgreSQL with publishing and recovery through plain QtSql
    // statements instead of libpq (the fallback path).
    explicit Backend(const QString &driver)
        : m_driver(driver.startsWith(u"postgresql") ? QStringLiteral("postgresql") : driver)
    {
        pq::setEnabled(driver != u"postgresql-qtsql");
        if (m_driver == u"postgresql") {
            QString error;
            const test::PostgresServer server = test::fixturePostgres(&error);
            if (!server.isValid()) {
                m_error = error;
                return;
            }
            m_pg = std::make_unique<test::TestDatabase>(server);
            m_error = m_pg->error();
        } else if (!m_dir.isValid()) {
            m_error = QStringLiteral("no temporary directory");
        }
    }
    ~Backend()
    {
        pq::setEnabled(true);
        if (!m_rawName.isEmpty()) {
            QSqlDatabase::database(m_rawName, false).close();
            QSqlDatabase::removeDatabase(m_rawName);
        }
    }

    QString error() const { return m_error; }
    bool isPostgres() const { return m_driver == u"postgresql"; }

    Config::Database settings() const
    {
        Config::Database db;
        db.driver = m_driver;
        db.connectAttempts = 1;
        db.connectRetryDelayMs = 10;
        if (m_pg) {
            db.hosts = {m_pg->server().host};
            db.ports = {m_pg->server().port};
            db.user = m_pg->server().user;
            db.dbname = m_pg->name();
        } else {
            db.path = m_dir.filePath(QStringLiteral("data/ciphermq.db")); // parent made on open
        }
        return db;
    }

    QSqlDatabase raw()
    {
        if (m_pg)
            return m_pg->connection();
        if (m_rawName.isEmpty()) {
            m_rawName = QStringLiteral("raw-%1").arg(quintptr(this));
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_rawName);
            db.setDatabaseName(settings().path);
        }
        QSqlDatabase db = QSqlDatabase::database(m_rawName, false);
        if (!db.isOpen())
            db.open();
        return db;
    }

    // First column of every row, as strings; "ERROR: ..." if the query fails.
    QStringList column(const QString &sql)
    {
        QSqlQuery query(raw());
        if (!query.exec(sql))
            return {QStringLiteral("ERROR: ") + query.lastError().text()};
        QStringList values;
        while (query.next())
            values << query.value(0).toString();
        return values;
    }

    bool exec(const QString &sql)
    {
        QSqlQuery query(raw());
        if (!query.exec(sql)) {
            qWarning("%s: %s", qPrintable(sql), qPrintable(query.lastError().text()));
            return false;
        }
        return true;
    }

    int count(const QString &sql) { return column(sql).value(0).toInt(); }

private:
    QString m_driver;
    QTemporaryDir m_dir;
    std::unique_ptr<test::TestDatabase> m_pg;
    QString m_error;
    QString m_rawName;
};

MessageRecord message(const QString &id, const QStringList &queues, const QByteArray &envelope = {})
{
    MessageRecord record;
    record.messageId = id.toUtf8();
    record.sender = QStringLiteral("publisher-svc-1");
    record.exchange = QStringLiteral("orders");
    record.routingKey = QStringLiteral("worker-svc-1.new");
    record.envelope = envelope.isEmpty() ? QByteArray(R"({"message_id":")") + id.toUtf8() +
                                               R"(","ciphertext":"AAEC"})"
                                         : envelope;
    // Millisecond precision is what the database keeps.
    record.sentTime = QDateTime::fromMSecsSinceEpoch(QDateTime::currentMSecsSinceEpoch(), Qt::UTC);
    record.queues = queues;
    return record;
}

template <typename T>
std::optional<T> waitForValue(const std::function<void(std::function<void(T)>)> &call)
{
    std::optional<T> value;
    call([&value](T v) { value = std::move(v); });
    if (!QTest::qWaitFor([&] { return value.has_value(); }, Timeout))
        return std::nullopt;
    return value;
}

QList<PublishResult> publishAndWait(Storage &storage, const QList<MessageRecord> &records)
{
    const auto results = waitForValue<QList<PublishResult>>(
        [&](auto done) { storage.publish(records, std::move(done)); });
    return results.value_or(QList<PublishResult>{});
}

Status statusOf(const std::function<void(Storage::StatusCallback)> &call)
{
    const auto status = waitForValue<Status>(call);
    return status ? *status : failure(QStringLiteral("timed out"));
}

QList<PublishOutcome> outcomes(const QList<PublishResult> &results)
{
    QList<PublishOutcome> list;
    for (const PublishResult &result : results)
        list << result.outcome;
    return list;
}

// Message ids per queue, in recovered order.
QMap<QString, QStringList> entriesByQueue(const RecoveredState &state)
{
    QMap<QString, QStringList> map;
    for (const QueueEntry &entry : state.entries)
        map[entry.queue] << QString::fromUtf8(entry.messageId);
    return map;
}

const QueueEntry *findEntry(const RecoveredState &state, const QString &queue, const QString &id)
{
    for (const QueueEntry &entry : state.entries) {
        if (entry.queue == queue && entry.messageId == id.toUtf8())
            return &entry;
    }
    return nullptr;
}

} // namespace

class tst_Storage : public QObject
{
    Q_OBJECT

private:
    void addDrivers(bool bothPostgresPaths = false);
    std::unique_ptr<Storage> open(Backend &backend, RecoveredState *state = nullptr,
                                  const QByteArray &key = aesKey());

private Q_SLOTS:
    void migrations_data() { addDrivers(); }
    void migrations();
    void refusesNewerSchema_data() { addDrivers(); }
    void refusesNewerSchema();
    void connectFailure_data() { addDrivers(); }
    void connectFailure();
    void publishAndRecover_data() { addDrivers(true); }
    void publishAndRecover();
    void duplicates_data() { addDrivers(true); }
    void duplicates();
    void invalidRecords_data() { addDrivers(true); }
    void invalidRecords();
    void groupCommit_data() { addDrivers(true); }
    void groupCommit();
    void deliveryUpdates_data() { addDrivers(); }
    void deliveryUpdates();
    void deliveryUpdatesFlushTriggers_data() { addDrivers(); }
    void deliveryUpdatesFlushTriggers();
    void deleteAndPurgeQueue_data() { addDrivers(); }
    void deleteAndPurgeQueue();
    void deleteQueueAfterPendingPublish_data() { addDrivers(); }
    void deleteQueueAfterPendingPublish();
    void publicKeys_data() { addDrivers(); }
    void publicKeys();
    void retentionPurge_data() { addDrivers(); }
    void retentionPurge();
    void inDoubtResolution_data() { addDrivers(true); }
    void inDoubtResolution();
    void noCallbacksAfterDestruction_data() { addDrivers(); }
    void noCallbacksAfterDestruction();
};

void tst_Storage::addDrivers(bool bothPostgresPaths)
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("sqlite") << QStringLiteral("sqlite");
    QTest::newRow("postgresql") << QStringLiteral("postgresql");
    if (bothPostgresPaths)
        QTest::newRow("postgresql-qtsql") << QStringLiteral("postgresql-qtsql");
}

std::unique_ptr<Storage> tst_Storage::open(Backend &backend, RecoveredState *state,
                                           const QByteArray &key)
{
    auto storage = std::make_unique<Storage>(backend.settings(), key);
    Result<RecoveredState> recovered = storage->openAndRecover();
    if (!recovered) {
        qWarning("openAndRecover failed: %s", qPrintable(recovered.error()));
        return nullptr;
    }
    if (state)
        *state = std::move(recovered).value();
    return storage;
}

#define BACKEND(name)                                                                              \
    QFETCH(QString, driver);                                                                       \
    Backend name(driver);                                                                          \
    QVERIFY2(name.error().isEmpty(), qPrintable(name.error()))

void tst_Storage::migrations()
{
    BACKEND(backend);
    {
        auto storage = open(backend);
        QVERIFY(storage);
        QVERIFY(storage->isAvailable());
    }
    QCOMPARE(backend.count(QStringLiteral("SELECT MAX(version) FROM schema_version")),
             latestSchemaVersion());
    // Numbers may have gaps while branches that add migrations are merged: count, not latest.
    const int applied = backend.count(QStringLiteral("SELECT COUNT(*) FROM schema_version"));
    QVERIFY(applied >= 1);
    for (const char *table : {"message_metadata", "message_bodies", "queue_entries", "exchanges",
                              "queues", "bindings", "public_keys"}) {
        const QStringList rows =
            backend.column(QStringLiteral("SELECT COUNT(*) FROM %1").arg(table));
        QCOMPARE(rows, QStringList{QStringLiteral("0")});
    }
    if (!backend.isPostgres()) {
        QCOMPARE(backend.column(QStringLiteral("PRAGMA journal_mode")),
                 QStringList{QStringLiteral("wal")});
    }

    // Re-opening applies nothing twice and keeps the data.
    QVERIFY(backend.exec(QStringLiteral("INSERT INTO exchanges (name, type, creator, created_at) "
                                        "VALUES ('kept', 'direct', 'x', '2024-01-01T00:00:00Z')")));
    RecoveredState state;
    auto storage = open(backend, &state);
    QVERIFY(storage);
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM schema_version")), applied);
    QCOMPARE(state.exchanges.size(), 1);
    QCOMPARE(state.exchanges.first().name, QStringLiteral("kept"));
}

void tst_Storage::refusesNewerSchema()
{
    BACKEND(backend);
    QVERIFY(open(backend));
    const int future = latestSchemaVersion() + 1;
    QVERIFY(backend.exec(QStringLiteral("INSERT INTO schema_version (version, description, "
                                        "applied_at) VALUES (%1, 'from the future', "
                                        "'2030-01-01T00:00:00Z')")
                             .arg(future)));
    Storage storage(backend.settings(), aesKey());
    const Result<RecoveredState> result = storage.openAndRecover();
    QVERIFY(!result);
    QCOMPARE(result.error(),
             QStringLiteral("database schema version %1 is newer than this broker supports (%2); "
                            "upgrade ciphermq-broker or point it at another database")
                 .arg(future)
                 .arg(latestSchemaVersion()));
    QVERIFY(!storage.isAvailable());
}

void tst_Storage::connectFailure()
{
    QFETCH(QString, driver);
    Config::Database settings;
    settings.driver = driver;
    settings.connectAttempts = 3;
    settings.connectRetryDelayMs = 10;
    QString expectedPrefix;
    QTemporaryDir dir;
    if (driver == u"postgresql") {
        settings.hosts = {QStringLiteral("127.0.0.1")};
        settings.ports = {test::freePort()}; // nothing listens there
        settings.user = QStringLiteral("ciphermq");
        expectedPrefix =
            QStringLiteral("cannot connect to PostgreSQL at 127.0.0.1:%1 as ciphermq: ")
                .arg(settings.ports.first());
    } else {
        // A directory cannot be created below a regular file.
        QFile blocker(dir.filePath(QStringLiteral("file")));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        settings.path = dir.filePath(QStringLiteral("file/sub/ciphermq.db"));
        expectedPrefix = QStringLiteral("cannot open SQLite database at %1: ").arg(settings.path);
    }
    for (int i = 0; i < settings.connectAttempts; ++i)
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("attempt .* failed")));
    Storage storage(settings, aesKey());
    const Result<RecoveredState> result = storage.openAndRecover();
    QVERIFY(!result);
    QVERIFY2(result.error().startsWith(expectedPrefix), qPrintable(result.error()));
    QVERIFY(!result.error().contains(u'\n'));

    // Nothing was opened: calls fail instead of queueing.
    const QList<PublishResult> results = publishAndWait(storage, {message("m", {"q"})});
    QCOMPARE(results.size(), 1);
    QCOMPARE(results.first().outcome, PublishOutcome::Failed);

    Config::Database unknown = settings;
    unknown.driver = QStringLiteral("mysql");
    Storage other(unknown, aesKey());
    QCOMPARE(other.openAndRecover().error(),
             QStringLiteral("unknown database.driver 'mysql' (expected postgresql or sqlite)"));
}

void tst_Storage::publishAndRecover()
{
    BACKEND(backend);
    QByteArray binary;
    for (int i = 0; i < 256; ++i)
        binary.append(char(i));
    binary += "'\"\\x00 ; DROP TABLE queues; --";

    QList<MessageRecord> sent;
    {
        auto storage = open(backend);
        QVERIFY(storage);
        QVERIFY(statusOf([&](auto done) {
            storage->saveExchange({"orders", "direct", "publisher-svc-1"}, done);
        }));
        QVERIFY(statusOf([&](auto done) {
            storage->saveQueue({"worker-svc-1_queue", "worker-svc-1", 500, "reject-publish"}, done);
        }));
        QVERIFY(statusOf([&](auto done) {
            storage->saveQueue({"audit_queue", "auditor", 0, "drop-head"}, done);
        }));
        QVERIFY(statusOf([&](auto done) {
            storage->saveBinding({"worker-svc-1_queue", "orders", "worker-svc-1.new"}, done);
        }));
        QVERIFY(statusOf([&](auto done) {
            storage->saveBinding({"audit_queue", "orders", "worker-svc-1.new"}, done);
        }));
        // Saving again keeps the first creator/owner and takes the new limits.
        QVERIFY(statusOf([&](auto done) {
            storage->saveExchange({"orders", "direct", "someone-else"}, done);
        }));
        QVERIFY(statusOf([&](auto done) {
            storage->saveQueue({"worker-svc-1_queue", "someone-else", 1000, "drop-head"}, done);
        }));

        sent << message("m1", {"worker-svc-1_queue"})
             << message("m2", {"worker-svc-1_queue", "audit_queue"}, binary)
             << message("m3", {"audit_queue"}) << message("m4", {"worker-svc-1_queue"})
             << message("m5 with spaces ünïcode 'quoted'", {"worker-svc-1_queue", "audit_queue"});
        QCOMPARE(outcomes(publishAndWait(*storage, sent.mid(0, 2))),
                 QList<PublishOutcome>(2, PublishOutcome::Stored));
        QCOMPARE(outcomes(publishAndWait(*storage, sent.mid(2))),
                 QList<PublishOutcome>(3, PublishOutcome::Stored));
    }

    RecoveredState state;
    auto storage = open(backend, &state);
    QVERIFY(storage);
    QCOMPARE(state.exchanges.size(), 1);
    QCOMPARE(state.exchanges[0].name, QStringLiteral("orders"));
    QCOMPARE(state.exchanges[0].creator, QStringLiteral("publisher-svc-1"));
    QCOMPARE(state.queues.size(), 2);
    QCOMPARE(state.queues[0].name, QStringLiteral("audit_queue"));
    QCOMPARE(state.queues[1].name, QStringLiteral("worker-svc-1_queue"));
    QCOMPARE(state.queues[1].owner, QStringLiteral("worker-svc-1"));
    QCOMPARE(state.queues[1].maxLength, qint64(1000));
    QCOMPARE(state.queues[1].overflow, QStringLiteral("drop-head"));
    QCOMPARE(state.bindings.size(), 2);
    QCOMPARE(state.bindings[1].queue, QStringLiteral("worker-svc-1_queue"));
    QCOMPARE(state.bindings[1].exchange, QStringLiteral("orders"));
    QCOMPARE(state.bindings[1].routingKey, QStringLiteral("worker-svc-1.new"));

    const QMap<QString, QStringList> byQueue = entriesByQueue(state);
    QCOMPARE(byQueue.value("worker-svc-1_queue"),
             QStringList({"m1", "m2", "m4", "m5 with spaces ünïcode 'quoted'"}));
    QCOMPARE(byQueue.value("audit_queue"),
             QStringList({"m2", "m3", "m5 with spaces ünïcode 'quoted'"}));
    QCOMPARE(state.entries.size(), 7);
    for (const MessageRecord &record : sent) {
        for (const QString &queue : record.queues) {
            const QueueEntry *entry = findEntry(state, queue, QString::fromUtf8(record.messageId));
            QVERIFY(entry);
            QCOMPARE(entry->envelope, record.envelope);
            QCOMPARE(entry->sender, record.sender);
            QCOMPARE(entry->exchange, record.exchange);
            QCOMPARE(entry->routingKey, record.routingKey);
            QCOMPARE(entry->sentTime, record.sentTime);
            QVERIFY(!entry->redelivered);
        }
    }
    // One envelope row per message, however many queues hold it.
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM message_bodies")), 5);
    QCOMPARE(backend.column(QStringLiteral("SELECT status FROM message_metadata WHERE "
                                           "message_id = 'm1'")),
             QStringList{QStringLiteral("sent")});
}

void tst_Storage::duplicates()
{
    BACKEND(backend);
    {
        auto storage = open(backend);
        QVERIFY(storage);
        QCOMPARE(outcomes(publishAndWait(*storage, {message("a", {"q"}), message("b", {"q"})})),
                 QList<PublishOutcome>({PublishOutcome::Stored, PublishOutcome::Stored}));
        // Across batches, and within one: the later record is the duplicate.
        MessageRecord changed = message("a", {"q", "other"}, "different envelope");
        QCOMPARE(outcomes(publishAndWait(*storage,
                                         {changed, message("c", {"q"}), message("c", {"other"})})),
                 QList<PublishOutcome>({PublishOutcome::Duplicate, PublishOutcome::Stored,
                                        PublishOutcome::Duplicate}));
    }
    RecoveredState state;
    auto storage = open(backend, &state);
    QVERIFY(storage);
    // Across a restart too, since the primary key is the check.
    QCOMPARE(outcomes(publishAndWait(*storage, {message("b", {"q"}), message("d", {"q"})})),
             QList<PublishOutcome>({PublishOutcome::Duplicate, PublishOutcome::Stored}));
    const QMap<QString, QStringList> byQueue = entriesByQueue(state);
    QCOMPARE(byQueue.value("q"), QStringList({"a", "b", "c"}));
    QVERIFY(!byQueue.contains("other"));
    QCOMPARE(findEntry(state, "q", "a")->envelope, message("a", {"q"}).envelope);
    QCOMPARE(storage->stats().duplicateRecords, quint64(1));
}

void tst_Storage::invalidRecords()
{
    BACKEND(backend);
    auto storage = open(backend);
    QVERIFY(storage);
    MessageRecord unroutable = message("u", {});
    MessageRecord badId = message("x", {"q"});
    badId.messageId = QByteArray("bad\xff\xfe", 5);
    // Too long for an index key: refused alone instead of failing the batch it is in.
    MessageRecord longId = message(QString(1001, u'x'), {"q"});
    const QList<PublishResult> results =
        publishAndWait(*storage, {unroutable, message("ok", {"q", "q"}), badId, longId});
    QCOMPARE(outcomes(results),
             QList<PublishOutcome>({PublishOutcome::Failed, PublishOutcome::Stored,
                                    PublishOutcome::Failed, PublishOutcome::Failed}));
    QCOMPARE(results[0].error, QStringLiteral("unroutable: no target queue"));
    QCOMPARE(results[2].error, QStringLiteral("message id is not valid UTF-8 text"));
    QCOMPARE(results[3].error, QStringLiteral("message id longer than 1000 bytes"));
    // An unroutable publish leaves nothing behind; a repeated queue is one entry.
    QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM message_metadata")),
             QStringList{QStringLiteral("ok")});
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries")), 1);
    // An empty publish is answered too.
    QCOMPARE(publishAndWait(*storage, {}).size(), 0);
}

void tst_Storage::groupCommit()
{
    BACKEND(backend);
    auto storage = open(backend);
    QVERIFY(storage);

    // 1000 publishers' records issued at once: the first transaction takes what is there when
    // it starts, the rest wait for it and share the next ones.
    constexpr int count = 1000;
    QList<int> answerOrder;
    int stored = 0;
    for (int i = 0; i < count; ++i) {
        storage->publish(
            {message(QStringLiteral("g%1").arg(i), {"q"})}, [&, i](QList<PublishResult> results) {
                answerOrder << i;
                if (results.size() == 1 && results[0].outcome == PublishOutcome::Stored)
                    ++stored;
            });
    }
    QTRY_COMPARE_WITH_TIMEOUT(answerOrder.size(), count, Timeout);
    QCOMPARE(stored, count);
    QList<int> expected(count);
    std::iota(expected.begin(), expected.end(), 0);
    QCOMPARE(answerOrder, expected); // callbacks in issue order
    const Storage::Stats stats = storage->stats();
    qInfo("%d publishes took %llu transactions (largest %d records)", count, stats.publishBatches,
          stats.maxBatchRecords);
    QVERIFY2(stats.publishBatches <= 10, qPrintable(QString::number(stats.publishBatches)));
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries")), count);

    // One oversized request is split at the batch bound and answered once, in order.
    QList<MessageRecord> many;
    for (int i = 0; i < 2500; ++i)
        many << message(QStringLiteral("big%1").arg(i), {"q"});
    const quint64 before = storage->stats().publishBatches;
    const QList<PublishResult> results = publishAndWait(*storage, many);
    QCOMPARE(results.size(), 2500);
    QCOMPARE(outcomes(results), QList<PublishOutcome>(2500, PublishOutcome::Stored));
    QCOMPARE(storage->stats().publishBatches - before, quint64(3));
    QCOMPARE(storage->stats().maxBatchRecords, Storage::MaxBatchRecords);

    RecoveredState state;
    storage.reset();
    storage = open(backend, &state);
    QVERIFY(storage);
    const QStringList ids = entriesByQueue(state).value("q");
    QCOMPARE(ids.size(), count + 2500);
    QCOMPARE(ids.first(), QStringLiteral("g0"));
    QCOMPARE(ids[count - 1], QStringLiteral("g%1").arg(count - 1));
    QCOMPARE(ids.last(), QStringLiteral("big2499"));
}

void tst_Storage::deliveryUpdates()
{
    BACKEND(backend);
    {
        auto storage = open(backend);
        QVERIFY(storage);
        QCOMPARE(outcomes(publishAndWait(
                     *storage, {message("m1", {"q1"}), message("m2", {"q1"}), message("m3", {"q1"}),
                                message("m4", {"q1", "q2"}), message("m5", {"q1"}),
                                message("m6", {"q1", "q2"}), message("m7", {"q1"})})),
                 QList<PublishOutcome>(7, PublishOutcome::Stored));
        storage->markDelivered("q1", "m1");
        storage->markDelivered("q1", "m2");
        storage->markAcknowledged("q1", "m2");
        storage->markEvicted("q1", "m3");
        storage->markDelivered("q1", "m4");
        storage->markAcknowledged("q1", "m4"); // still in q2: its envelope stays
        storage->markAcknowledged("q1", "m6"); // out of both queues in one batch: it goes
        storage->markAcknowledged("q2", "m6");
        storage->markAcknowledged("q1", "m7"); // the same entry twice in one batch
        storage->markEvicted("q1", "m7");
        // Destroying the storage writes what is buffered.
    }

    RecoveredState state;
    auto storage = open(backend, &state);
    QVERIFY(storage);
    const QMap<QString, QStringList> byQueue = entriesByQueue(state);
    QCOMPARE(byQueue.value("q1"), QStringList({"m1", "m5"}));
    QCOMPARE(byQueue.value("q2"), QStringList({"m4"}));
    QVERIFY(findEntry(state, "q1", "m1")->redelivered); // delivered, never acked
    QVERIFY(!findEntry(state, "q1", "m5")->redelivered);
    QVERIFY(!findEntry(state, "q2", "m4")->redelivered); // delivered from q1, not from q2
    QCOMPARE(findEntry(state, "q2", "m4")->envelope, message("m4", {}).envelope);

    auto status = [&](const QString &id) {
        return backend
            .column(QStringLiteral("SELECT status FROM message_metadata WHERE "
                                   "message_id = '%1'")
                        .arg(id))
            .value(0);
    };
    QCOMPARE(status("m1"), QStringLiteral("delivered"));
    QCOMPARE(status("m2"), QStringLiteral("acknowledged"));
    QCOMPARE(status("m3"), QStringLiteral("evicted"));
    QCOMPARE(status("m4"), QStringLiteral("acknowledged"));
    QCOMPARE(status("m5"), QStringLiteral("sent"));
    QCOMPARE(status("m6"), QStringLiteral("acknowledged"));
    QCOMPARE(status("m7"), QStringLiteral("acknowledged"));
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM message_metadata WHERE "
                                          "message_id = 'm2' AND delivered_time IS NOT NULL "
                                          "AND acknowledged_time IS NOT NULL")),
             1);
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM message_metadata WHERE "
                                          "message_id = 'm3' AND evicted_time IS NOT NULL")),
             1);
    QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM message_bodies "
                                           "ORDER BY message_id")),
             QStringList({"m1", "m4", "m5"}));
}

void tst_Storage::deliveryUpdatesFlushTriggers()
{
    BACKEND(backend);
    auto storage = open(backend);
    QVERIFY(storage);
    QList<MessageRecord> records;
    for (int i = 0; i < 60; ++i)
        records << message(QStringLiteral("t%1").arg(i), {"q"});
    QCOMPARE(outcomes(publishAndWait(*storage, records)),
             QList<PublishOutcome>(60, PublishOutcome::Stored));

    // The timer: one ack is written within the flush interval without any other trigger.
    storage->markAcknowledged("q", "t0");
    QCOMPARE(storage->stats().updateFlushes, quint64(0));
    QTRY_COMPARE_WITH_TIMEOUT(
        backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries WHERE message_id = 't0'")),
        0, Timeout);
    QCOMPARE(storage->stats().updateFlushes, quint64(1));

    // The count: the 50th update is handed over at once.
    for (int i = 1; i < Storage::UpdateFlushItems; ++i)
        storage->markAcknowledged("q", QByteArray("t") + QByteArray::number(i));
    QCOMPARE(storage->stats().updateFlushes, quint64(1));
    storage->markAcknowledged("q", "t50");
    QCOMPARE(storage->stats().updateFlushes, quint64(2));
    QTRY_COMPARE_WITH_TIMEOUT(backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries")),
                              60 - 51, Timeout);
    QCOMPARE(storage->stats().updateItems, quint64(51));
}

void tst_Storage::deleteAndPurgeQueue()
{
    BACKEND(backend);
    {
        auto storage = open(backend);
        QVERIFY(storage);
        for (const char *queue : {"q1", "q2"}) {
            QVERIFY(statusOf([&](auto done) { storage->saveQueue({queue, "owner"}, done); }));
            QVERIFY(statusOf([&](auto done) { storage->saveBinding({queue, "ex", queue}, done); }));
        }
        QCOMPARE(outcomes(publishAndWait(*storage,
                                         {message("only1", {"q1"}), message("shared", {"q1", "q2"}),
                                          message("only2", {"q2"})})),
                 QList<PublishOutcome>(3, PublishOutcome::Stored));

        QVERIFY(statusOf([&](auto done) { storage->purgeQueue("q1", done); }));
        QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM message_bodies "
                                               "ORDER BY message_id")),
                 QStringList({"only2", "shared"})); // "shared" is still in q2
        QVERIFY(statusOf([&](auto done) { storage->deleteQueue("q2", done); }));
        QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM message_bodies")), 0);
        QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries")), 0);
        // Deleting what is not there is not an error.
        QVERIFY(statusOf([&](auto done) { storage->deleteQueue("never-declared", done); }));
    }
    RecoveredState state;
    auto storage = open(backend, &state);
    QVERIFY(storage);
    QCOMPARE(state.queues.size(), 1);
    QCOMPARE(state.queues[0].name, QStringLiteral("q1"));
    QCOMPARE(state.bindings.size(), 1);
    QCOMPARE(state.bindings[0].queue, QStringLiteral("q1"));
    QVERIFY(state.entries.isEmpty());
}

void tst_Storage::deleteQueueAfterPendingPublish()
{
    BACKEND(backend);
    auto storage = open(backend);
    QVERIFY(storage);
    QVERIFY(statusOf([&](auto done) { storage->saveQueue({"doomed", "owner"}, done); }));

    // Issued in this order without waiting: the delete must not overtake the publishes, even
    // though they wait for a transaction and the delete would not.
    int answered = 0;
    for (int i = 0; i < 20; ++i) {
        storage->publish({message(QStringLiteral("p%1").arg(i), {"doomed"})},
                         [&](QList<PublishResult>) { ++answered; });
    }
    std::optional<Status> deleted;
    storage->deleteQueue("doomed", [&](Status st) { deleted = st; });
    storage->publish({message("after", {"kept"})}, [&](QList<PublishResult>) { ++answered; });
    QTRY_VERIFY_WITH_TIMEOUT(deleted.has_value() && answered == 21, Timeout);
    QVERIFY(*deleted);
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries WHERE "
                                          "queue = 'doomed'")),
             0);
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM message_bodies")), 1);
}

void tst_Storage::publicKeys()
{
    BACKEND(backend);
    const QByteArray key = "MCowBQYDK2VuAyEA3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08=";
    {
        auto storage = open(backend);
        QVERIFY(storage);
        QVERIFY(statusOf([&](auto done) { storage->savePublicKey("worker-svc-1", key, done); }));
        const auto loaded = waitForValue<Result<std::optional<QByteArray>>>(
            [&](auto done) { storage->loadPublicKey("worker-svc-1", done); });
        QVERIFY(loaded && loaded->ok());
        QCOMPARE(loaded->value(), std::optional<QByteArray>(key));

        const auto missing = waitForValue<Result<std::optional<QByteArray>>>(
            [&](auto done) { storage->loadPublicKey("nobody", done); });
        QVERIFY(missing && missing->ok());
        QVERIFY(!missing->value().has_value());

        // What is at rest is not the key: base64 columns of ciphertext, a 12-byte nonce and a
        // 16-byte tag.
        QSqlQuery row(backend.raw());
        QVERIFY(row.exec(QStringLiteral("SELECT ciphertext, nonce, tag FROM public_keys WHERE "
                                        "client_id = 'worker-svc-1'")));
        QVERIFY(row.next());
        const QByteArray ciphertext = QByteArray::fromBase64(row.value(0).toString().toLatin1());
        const QByteArray nonce = QByteArray::fromBase64(row.value(1).toString().toLatin1());
        QCOMPARE(ciphertext.size(), key.size());
        QVERIFY(ciphertext != key);
        QVERIFY(!row.value(0).toString().toLatin1().contains(key.left(16)));
        QCOMPARE(nonce.size(), 12);
        QCOMPARE(QByteArray::fromBase64(row.value(2).toString().toLatin1()).size(), 16);
        row.finish();

        // A fresh nonce per write.
        QVERIFY(statusOf([&](auto done) { storage->savePublicKey("worker-svc-1", key, done); }));
        QVERIFY(backend.column(QStringLiteral("SELECT nonce FROM public_keys")).value(0) !=
                QString::fromLatin1(nonce.toBase64()));

        // A row copied under another name does not open: the client id is authenticated too.
        QVERIFY(
            backend.exec(QStringLiteral("INSERT INTO public_keys (client_id, ciphertext, "
                                        "nonce, tag, updated_at) SELECT 'mallory', "
                                        "ciphertext, nonce, tag, updated_at FROM public_keys")));
        const auto copied = waitForValue<Result<std::optional<QByteArray>>>(
            [&](auto done) { storage->loadPublicKey("mallory", done); });
        QVERIFY(copied && !copied->ok());
    }

    // The wrong encryption.aes_key fails loudly rather than returning garbage.
    auto storage = open(backend, nullptr, aesKey('w'));
    QVERIFY(storage);
    const auto wrong = waitForValue<Result<std::optional<QByteArray>>>(
        [&](auto done) { storage->loadPublicKey("worker-svc-1", done); });
    QVERIFY(wrong);
    QVERIFY(!wrong->ok());
    QCOMPARE(wrong->error(), QStringLiteral("cannot decrypt public key for worker-svc-1: wrong "
                                            "encryption.aes_key or corrupted row"));
}

void tst_Storage::retentionPurge()
{
    BACKEND(backend);
    auto storage = open(backend);
    QVERIFY(storage);
    QCOMPARE(outcomes(publishAndWait(*storage, {message("done", {"q"}), message("waiting", {"q"}),
                                                message("evicted", {"q"})})),
             QList<PublishOutcome>(3, PublishOutcome::Stored));
    storage->markAcknowledged("q", "done");
    storage->markEvicted("q", "evicted");
    storage->flushDeliveryUpdates();

    // Within the retention nothing goes, and the id still counts as a duplicate.
    auto purge = [&] {
        const auto removed =
            waitForValue<Result<qint64>>([&](auto done) { storage->purgeExpiredMetadata(done); });
        return removed && removed->ok() ? removed->value() : -1;
    };
    QCOMPARE(purge(), qint64(0));
    QCOMPARE(outcomes(publishAndWait(*storage, {message("done", {"q"})})),
             QList<PublishOutcome>{PublishOutcome::Duplicate});

    storage->setRetentionDays(0);
    QCOMPARE(purge(), qint64(2)); // queued behind the setter: the same worker queue
    QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM message_metadata")),
             QStringList{QStringLiteral("waiting")}); // still queued: kept whatever its age
}

void tst_Storage::inDoubtResolution()
{
    // The after-the-fact answer for a batch whose commit confirmation was lost: its rows carry
    // its token. Exercised here directly on a connection of the test's own.
    BACKEND(backend);
    QVERIFY(open(backend)); // migrate
    SqlSession session(backend.raw(), dialectOf(backend.raw()));
    const QList<MessageRecord> first = {message("x1", {"q"}), message("x2", {"q"})};
    const PublishPlan firstPlan = planPublish(first);
    const auto written = writePublishBatch(session, first, firstPlan, 1111);
    QVERIFY2(written, qPrintable(written.error()));
    QCOMPARE(written->size(), 2);
    if (backend.isPostgres()) {
        // The libpq path prepares its statement on the connection; the QtSql fallback does not.
        QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM pg_prepared_statements "
                                              "WHERE name = 'ciphermq_publish'")),
                 driver == u"postgresql" ? 1 : 0);
    }

    const QList<MessageRecord> second = {message("x2", {"q"}), message("x3", {"q"})};
    const PublishPlan secondPlan = planPublish(second);
    // The first batch committed with token 1111: x1, x2 are its own.
    auto resolved = resolveInDoubt(session, firstPlan, 1111);
    QVERIFY(resolved);
    QCOMPARE(resolved->inserted, QSet<QString>({"x1", "x2"}));
    QVERIFY(resolved->existing.isEmpty());
    // A batch with token 2222 that never committed: x2 exists (from elsewhere), x3 does not.
    resolved = resolveInDoubt(session, secondPlan, 2222);
    QVERIFY(resolved);
    QVERIFY(resolved->inserted.isEmpty());
    QCOMPARE(resolved->existing, QSet<QString>({"x2"}));
}

void tst_Storage::noCallbacksAfterDestruction()
{
    BACKEND(backend);
    int called = 0;
    {
        auto storage = open(backend);
        QVERIFY(storage);
        for (int i = 0; i < 50; ++i) {
            storage->publish({message(QStringLiteral("n%1").arg(i), {"q"})},
                             [&](QList<PublishResult>) { ++called; });
        }
        storage->saveQueue({"q", "owner"}, [&](Status) { ++called; });
        storage->loadPublicKey("k", [&](Result<std::optional<QByteArray>>) { ++called; });
    }
    QCoreApplication::sendPostedEvents();
    QCoreApplication::processEvents();
    QCOMPARE(called, 0);
}

QTEST_GUILESS_MAIN(tst_Storage)
#include "tst_storage.moc"
