// Storage against both drivers: schema migrations, the group-committed publish path and its
// deduplication, what a restart recovers, in-doubt commits and shutdown. Delivery updates, queue
// deletes, the key directory and the retention purge are tst_storagequeues. Every test runs on
// SQLite and on a fresh PostgreSQL database of its own.

#include <QFileInfo>

#include "storage/connection.h"
#include "storagetestbackend.h"

using namespace cmq::storagetest;

class tst_Storage : public QObject, public cmq::storagetest::StorageTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void migrations_data() { addDrivers(); }
    void migrations();
    void refusesNewerSchema_data() { addDrivers(); }
    void refusesNewerSchema();
    void connectFailure_data() { addDrivers(); }
    void connectFailure();
    void sessionSettings_data() { addDrivers(); }
    void sessionSettings();
    void publishAndRecover_data() { addDrivers(true); }
    void publishAndRecover();
    void duplicates_data() { addDrivers(true); }
    void duplicates();
    void invalidRecords_data() { addDrivers(true); }
    void invalidRecords();
    void groupCommit_data() { addDrivers(true); }
    void groupCommit();
    void pipelinedBatchLimit_data();
    void pipelinedBatchLimit();
    void inDoubtResolution_data() { addDrivers(true); }
    void inDoubtResolution();
    void noCallbacksAfterDestruction_data() { addDrivers(); }
    void noCallbacksAfterDestruction();
    void sqliteLogCheckpointedInBackground();
};

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

// Every connection the broker opens overrides defaults that would break a promise or the speed:
// a database default of synchronous_commit=off would ACK before the commit is durable, and JIT
// compiled each drain page's plan at every execution (bench/README.md, "The drain's server CPU
// was JIT compilation"). The defaults are set on the database, where an operator might.
void tst_Storage::sessionSettings()
{
    BACKEND(backend);
    const Config::Database settings = backend.settings();
    QStringList shows;
    QStringList expected;
    if (backend.isPostgres()) {
        for (const char *setting : {"jit TO on", "synchronous_commit TO off"}) {
            QVERIFY(backend.exec(
                QStringLiteral("ALTER DATABASE \"%1\" SET %2").arg(settings.dbname, setting)));
        }
        shows = {QStringLiteral("SHOW jit"), QStringLiteral("SHOW synchronous_commit"),
                 QStringLiteral("SHOW client_min_messages")};
        expected = {QStringLiteral("off"), QStringLiteral("on"), QStringLiteral("warning")};
    } else {
        // synchronous=FULL is 2; secure_delete=FAST is 2 (Debian's SQLite defaults to 1, ON).
        shows = {QStringLiteral("PRAGMA journal_mode"), QStringLiteral("PRAGMA synchronous"),
                 QStringLiteral("PRAGMA foreign_keys"), QStringLiteral("PRAGMA wal_autocheckpoint"),
                 QStringLiteral("PRAGMA secure_delete")};
        expected = {QStringLiteral("wal"), QStringLiteral("2"), QStringLiteral("1"),
                    QStringLiteral("10000"), QStringLiteral("2")};
    }
    const QString name = QStringLiteral("session-settings");
    Result<SqlSession> opened =
        openSession(settings, *dialectNamed(settings.driver), name, QStringLiteral("tst_storage"));
    QVERIFY2(opened, qPrintable(opened.error()));
    QStringList actual;
    {
        QSqlQuery query(opened->database());
        for (const QString &show : shows) {
            QVERIFY2(query.exec(show) && query.next(), qPrintable(query.lastError().text()));
            actual << query.value(0).toString();
        }
    }
    closeSession(opened.value(), name);
    QCOMPARE(actual, expected);
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
    // A message held by one queue has its envelope in its queue entry; one held by several has
    // one shared envelope row, however many queues hold it (migration 14).
    QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM message_bodies "
                                           "WHERE message_id IN ('m1', 'm2', 'm3', 'm4')")),
             QStringList{QStringLiteral("m2")});
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM message_bodies")), 2);
    QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM queue_entries "
                                           "WHERE envelope IS NOT NULL ORDER BY id")),
             QStringList({"m1", "m3", "m4"}));
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
void tst_Storage::pipelinedBatchLimit_data()
{
    QTest::addColumn<int>("waiting");
    QTest::addColumn<int>("inFlight");
    QTest::addColumn<int>("limit");
    const int min = Storage::MinPipelinedBatch;
    const int max = Storage::MaxBatchRecords;
    QTest::newRow("nothing waits") << 0 << 0 << 0;
    QTest::newRow("idle worker, a trickle: all of it") << 5 << 0 << max;
    QTest::newRow("idle worker, just under two halves: all of it") << 2 * min - 1 << 0 << max;
    QTest::newRow("idle worker, a burst: half") << 256 << 0 << 128;
    QTest::newRow("idle worker, an odd burst: the larger half") << 257 << 0 << 129;
    QTest::newRow("idle worker, a huge burst: a full batch") << 5000 << 0 << max;
    QTest::newRow("one committing, a trickle: wait") << min - 1 << 1 << 0;
    QTest::newRow("one committing, enough: go behind it") << min << 1 << max;
    QTest::newRow("pipeline full: wait") << 5000 << Storage::MaxBatchesInFlight << 0;
}

// Which batch goes to the worker when (storagepublish.cpp): a pure rule, checked without a
// database.
void tst_Storage::pipelinedBatchLimit()
{
    QFETCH(int, waiting);
    QFETCH(int, inFlight);
    QFETCH(int, limit);
    QCOMPARE(Storage::publishBatchLimit(waiting, inFlight), qsizetype(limit));
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
        // New ids only: the statement without ON CONFLICT.
        QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM pg_prepared_statements "
                                              "WHERE name = 'ciphermq_publish_new'")),
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
    // Written now: x2 is there already, so on PostgreSQL the batch meets a unique violation and
    // runs again with ON CONFLICT; x3 alone is new.
    const auto again = writePublishBatch(session, second, secondPlan, 3333);
    QVERIFY2(again, qPrintable(again.error()));
    QCOMPARE(again.value(), QSet<QString>({"x3"}));
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries")), 3);
    if (driver == u"postgresql") {
        QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM pg_prepared_statements "
                                              "WHERE name = 'ciphermq_publish'")),
                 1);
    }
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

// SQLite copies its log into the database file in a checkpoint. The writer (the storage thread)
// did that itself, inside the commit that took the log past 10,000 pages; now a thread of its
// own does it every 5,000 pages (SqliteCheckpointer). About 6,000 pages of log here: before the
// change no checkpoint ran and the database file kept only the schema.
void tst_Storage::sqliteLogCheckpointedInBackground()
{
    Backend backend(QStringLiteral("sqlite"));
    QVERIFY2(backend.error().isEmpty(), qPrintable(backend.error()));
    auto storage = open(backend);
    QVERIFY(storage);
    const QString file = backend.settings().path;
    const qint64 before = QFileInfo(file).size();
    QList<MessageRecord> records;
    for (int i = 0; i < 3500; ++i) {
        records << message(QStringLiteral("ckpt%1").arg(i), {"q"},
                           QByteArray(R"({"message_id":"ckpt)") + QByteArray::number(i) +
                               R"(","ciphertext":")" + QByteArray(6000, 'A') + R"("})");
        if (records.size() == 100) {
            QCOMPARE(outcomes(publishAndWait(*storage, records)),
                     QList<PublishOutcome>(100, PublishOutcome::Stored));
            records.clear();
        }
    }
    // The log's pages reach the database file without any further commit.
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(file).size() > before + 8 * 1024 * 1024, Timeout);
    qInfo("database file %lld -> %lld bytes", before, QFileInfo(file).size());
}

QTEST_GUILESS_MAIN(tst_Storage)
#include "tst_storage.moc"
