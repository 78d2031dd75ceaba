// Storage against both drivers, after the publish: delivery updates (held, batched, flushed) and
// what they mean after a restart, PostgreSQL's connection of their own, queue deletes and purges
// ordered behind publishes, the encrypted key directory and the retention purge. Every test runs on
// SQLite and on a fresh PostgreSQL database of its own.

#include "storagetestbackend.h"

using namespace cmq::storagetest;

class tst_StorageQueues : public QObject, public cmq::storagetest::StorageTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void deliveryUpdates_data() { addDrivers(); }
    void deliveryUpdates();
    void deliveryUpdatesFlushTriggers_data() { addDrivers(); }
    void deliveryUpdatesFlushTriggers();
    void updateConnection_data();
    void updateConnection();
    void updateConnectionLost_data();
    void updateConnectionLost();
    void pageReadAfterAck_data();
    void pageReadAfterAck();
    void deleteAndPurgeQueue_data() { addDrivers(); }
    void deleteAndPurgeQueue();
    void deleteQueueAfterPendingPublish_data() { addDrivers(); }
    void deleteQueueAfterPendingPublish();
    void publicKeys_data() { addDrivers(); }
    void publicKeys();
    void retentionPurge_data() { addDrivers(); }
    void retentionPurge();
};

void tst_StorageQueues::deliveryUpdates()
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
    // Shared envelopes of the messages routed to both queues: m4's stays (still in q2), m6's
    // went with its last entry; m1 and m5 keep theirs in their entries.
    QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM message_bodies "
                                           "ORDER BY message_id")),
             QStringList({"m4"}));
    QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM queue_entries "
                                           "WHERE envelope IS NOT NULL ORDER BY message_id")),
             QStringList({"m1", "m5"}));
}

void tst_StorageQueues::deliveryUpdatesFlushTriggers()
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

void tst_StorageQueues::updateConnection_data()
{
    QTest::addColumn<QString>("driver");
    QTest::addColumn<bool>("separate");
    QTest::addColumn<int>("connections");
    QTest::newRow("postgresql, its own") << QStringLiteral("postgresql") << true << 2;
    QTest::newRow("postgresql, shared") << QStringLiteral("postgresql") << false << 1;
}

namespace {

std::unique_ptr<Storage> openWithUpdateConnection(Backend &backend, bool separate)
{
    Config::Database settings = backend.settings();
    settings.separateUpdateConnection = separate;
    auto storage = std::make_unique<Storage>(settings, aesKey());
    if (const Result<RecoveredState> recovered = storage->openAndRecover(); !recovered) {
        qWarning("openAndRecover failed: %s", qPrintable(recovered.error()));
        return nullptr;
    }
    return storage;
}

} // namespace

// database.separate_update_connection: the broker's connections to its database.
void tst_StorageQueues::updateConnection()
{
    BACKEND(backend);
    QFETCH(bool, separate);
    QFETCH(int, connections);
    const auto storage = openWithUpdateConnection(backend, separate);
    QVERIFY(storage);
    const QString count =
        QStringLiteral("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND application_name = 'ciphermq-broker'");
    QTRY_COMPARE_WITH_TIMEOUT(backend.count(count), connections, Timeout);
}

// The update connection takes its settings for the session, not per transaction, and sends each
// statement alone: a backend it loses is replaced, the settings declared again, and what was
// handed over is written there.
void tst_StorageQueues::updateConnectionLost_data()
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("postgresql") << QStringLiteral("postgresql");
}

void tst_StorageQueues::updateConnectionLost()
{
    BACKEND(backend);
    const auto opened = openWithUpdateConnection(backend, true);
    QVERIFY(opened);
    Storage &storage = *opened;
    QCOMPARE(outcomes(publishAndWait(storage, {message("l1", {"q"}), message("l2", {"q"})})),
             QList<PublishOutcome>(2, PublishOutcome::Stored));
    const QString entries = QStringLiteral("SELECT COUNT(*) FROM queue_entries");
    storage.markAcknowledged("q", "l1");
    storage.flushDeliveryUpdates();
    QTRY_COMPARE_WITH_TIMEOUT(backend.count(entries), 1, Timeout);

    // The update connection is the broker's newer backend (opened after the worker's).
    const QString broker =
        QStringLiteral("FROM pg_stat_activity WHERE datname = current_database() "
                       "AND application_name = 'ciphermq-broker'");
    QTRY_COMPARE_WITH_TIMEOUT(backend.count(QStringLiteral("SELECT COUNT(*) ") + broker), 2,
                              Timeout);
    const int updater = backend.count(QStringLiteral("SELECT pid ") + broker +
                                      QStringLiteral(" ORDER BY backend_start DESC LIMIT 1"));
    QVERIFY(backend.exec(QStringLiteral("SELECT pg_terminate_backend(%1)").arg(updater)));
    QTRY_COMPARE_WITH_TIMEOUT(
        backend.count(
            QStringLiteral("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = %1").arg(updater)),
        0, Timeout);

    storage.markAcknowledged("q", "l2");
    storage.flushDeliveryUpdates();
    QTRY_COMPARE_WITH_TIMEOUT(backend.count(entries), 0, Timeout);
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM message_metadata "
                                          "WHERE status = 'acknowledged'")),
             2);
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) ") + broker), 2);
}

void tst_StorageQueues::pageReadAfterAck_data()
{
    QTest::addColumn<QString>("driver");
    QTest::addColumn<bool>("separate");
    QTest::newRow("sqlite") << QStringLiteral("sqlite") << false;
    QTest::newRow("postgresql, update connection") << QStringLiteral("postgresql") << true;
    QTest::newRow("postgresql, one connection") << QStringLiteral("postgresql") << false;
}

// A backlog page read after acks were handed over does not find those entries: with the updates
// on a connection of their own, the read waits until that connection has written them (they
// would otherwise still sit in its buffer for UpdateWriteIntervalMs).
void tst_StorageQueues::pageReadAfterAck()
{
    BACKEND(backend);
    QFETCH(bool, separate);
    const auto opened = openWithUpdateConnection(backend, separate);
    QVERIFY(opened);
    Storage &storage = *opened;
    QList<MessageRecord> records;
    for (int i = 0; i < 10; ++i)
        records << message(QStringLiteral("p%1").arg(i), {"q"});
    QCOMPARE(outcomes(publishAndWait(storage, records)),
             QList<PublishOutcome>(10, PublishOutcome::Stored));
    for (int round = 0; round < 5; ++round) {
        storage.markDelivered("q", QByteArray("p") + QByteArray::number(round));
        storage.markAcknowledged("q", QByteArray("p") + QByteArray::number(round));
        storage.flushDeliveryUpdates(); // handed over now, not after the facade's hold
        const auto page = waitForValue<Result<QueuePage>>(
            [&](auto done) { storage.loadQueuePage("q", 0, {}, 100, done); });
        QVERIFY(page && page->ok());
        QStringList ids;
        for (const QueueEntry &entry : page->value().entries)
            ids << QString::fromUtf8(entry.messageId);
        QCOMPARE(ids.size(), 9 - round);
        QCOMPARE(ids.first(), QStringLiteral("p%1").arg(round + 1));
    }
}

void tst_StorageQueues::deleteAndPurgeQueue()
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
        // "shared" is still in q2; "only2" has its envelope in its entry.
        QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM message_bodies "
                                               "ORDER BY message_id")),
                 QStringList({"shared"}));
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

void tst_StorageQueues::deleteQueueAfterPendingPublish()
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
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries WHERE "
                                          "message_id = 'after' AND envelope IS NOT NULL")),
             1);
    QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM message_bodies")), 0);
}

void tst_StorageQueues::publicKeys()
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

void tst_StorageQueues::retentionPurge()
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

QTEST_GUILESS_MAIN(tst_StorageQueues)
#include "tst_storagequeues.moc"
