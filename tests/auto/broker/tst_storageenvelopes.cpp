// Where envelopes live (migration 14), against both drivers: a message routed to one queue has
// its envelope in its queue entry and no message_bodies row, one routed to several has one
// shared row; every reader (recovery and backlog pages, queue_messages sizes, dead-letter moves
// and requeues, acks, purges) serves both shapes, and rows written before migration 14 (entry
// envelope NULL, the envelope in message_bodies) keep working without a data migration.

#include "storage/messagelisting.h"
#include "storagetestbackend.h"

using namespace cmq::storagetest;

namespace {

// The envelope of each entry of `queue` as recovered, by message id.
QMap<QString, QByteArray> recoveredEnvelopes(const RecoveredState &state, const QString &queue)
{
    QMap<QString, QByteArray> envelopes;
    for (const QueueEntry &entry : state.entries) {
        if (entry.queue == queue)
            envelopes.insert(QString::fromUtf8(entry.messageId), entry.envelope);
    }
    return envelopes;
}

// Envelope sizes of a queue's entries as queue_messages lists them.
QMap<QString, qint64> listedSizes(Storage &storage, const QString &queue)
{
    MessageListingQuery query;
    query.queue = queue;
    const auto page = waitForValue<Result<MessageListingPage>>(
        [&](auto done) { storage.listQueueMessages(query, done); });
    QMap<QString, qint64> sizes;
    if (page && page->ok()) {
        for (const MessageListingRow &row : page->value().rows)
            sizes.insert(row.messageId, row.size);
    }
    return sizes;
}

// A queue's first entries as a backlog page reads them (empty when the read failed).
QList<QueueEntry> firstPage(Storage &storage, const QString &queue)
{
    const auto page = waitForValue<Result<QueuePage>>(
        [&](auto done) { storage.loadQueuePage(queue, 0, {}, 10, done); });
    return page && page->ok() ? page->value().entries : QList<QueueEntry>{};
}

} // namespace

class tst_StorageEnvelopes : public QObject, public StorageTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void singleAndShared_data() { addDrivers(true); }
    void singleAndShared();
    void deadLetteredKeepsItsEnvelope_data() { addDrivers(true); }
    void deadLetteredKeepsItsEnvelope();
    void rowsFromBeforeMigration14_data() { addDrivers(); }
    void rowsFromBeforeMigration14();
};

void tst_StorageEnvelopes::singleAndShared()
{
    BACKEND(backend);
    const MessageRecord one = message("one", {"q1"});
    const MessageRecord two = message("two", {"q1", "q2"});
    {
        auto storage = open(backend);
        QVERIFY(storage);
        QCOMPARE(outcomes(publishAndWait(*storage, {one, two})),
                 QList<PublishOutcome>(2, PublishOutcome::Stored));
        QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM message_bodies")),
                 QStringList{QStringLiteral("two")});
        QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM queue_entries "
                                               "WHERE envelope IS NOT NULL")),
                 QStringList{QStringLiteral("one")});
        QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries WHERE "
                                              "message_id = 'two' AND envelope IS NULL")),
                 2);
        const QMap<QString, qint64> sizes = listedSizes(*storage, "q1");
        QCOMPARE(sizes.value("one"), one.envelope.size());
        QCOMPARE(sizes.value("two"), two.envelope.size());
    }
    {
        RecoveredState state;
        auto storage = open(backend, &state);
        QVERIFY(storage);
        QCOMPARE(recoveredEnvelopes(state, "q1"),
                 (QMap<QString, QByteArray>{{"one", one.envelope}, {"two", two.envelope}}));
        QCOMPARE(recoveredEnvelopes(state, "q2"),
                 (QMap<QString, QByteArray>{{"two", two.envelope}}));
        // Paged in after the head as well.
        const QList<QueueEntry> page = firstPage(*storage, "q1");
        QCOMPARE(page.size(), 2);
        QCOMPARE(page[0].envelope, one.envelope);
        QCOMPARE(page[1].envelope, two.envelope);

        storage->markAcknowledged("q1", "one");
        storage->markAcknowledged("q1", "two");
        storage->flushDeliveryUpdates();
        QTRY_COMPARE_WITH_TIMEOUT(
            backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries WHERE queue = 'q1'")),
            0, Timeout);
        // Still in q2: the shared envelope stays until its last entry goes.
        QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM message_bodies")),
                 QStringList{QStringLiteral("two")});
        storage->markAcknowledged("q2", "two");
        storage->flushDeliveryUpdates();
        QTRY_COMPARE_WITH_TIMEOUT(
            backend.count(QStringLiteral("SELECT COUNT(*) FROM message_bodies")), 0, Timeout);
        QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries")), 0);
    }
}

void tst_StorageEnvelopes::deadLetteredKeepsItsEnvelope()
{
    BACKEND(backend);
    const MessageRecord one = message("one", {"q1"});
    const MessageRecord twice = message("twice", {"q1"});
    const MessageRecord back = message("back", {"q1"});
    const MessageRecord gone = message("gone", {"q1"});
    const QDateTime at = QDateTime::fromMSecsSinceEpoch(1764662400000, Qt::UTC);
    {
        auto storage = open(backend);
        QVERIFY(storage);
        for (const char *queue : {"q1", "dlq", "dlq2"})
            QVERIFY(statusOf([&](auto done) { storage->saveQueue({queue, "owner"}, done); }));
        QCOMPARE(outcomes(publishAndWait(*storage, {one, twice, back, gone})),
                 QList<PublishOutcome>(4, PublishOutcome::Stored));
        // To one dead-letter queue, to two, back into its own queue (a requeue), to nowhere.
        const QList<EntryMove> moves = {
            {"q1", "one", {"dlq"}, "rejected", "q1", at, 1},
            {"q1", "twice", {"dlq", "dlq2"}, "expired", "q1", at, 0},
            {"q1", "back", {"q1"}, {}, {}, {}, 0},
            {"q1", "gone", {}, "rejected", "q1", at, 1},
        };
        QVERIFY(statusOf([&](auto done) { storage->moveEntries(moves, done); }));
        // A moved entry hands its envelope to message_bodies; one moved nowhere leaves nothing.
        QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM message_bodies "
                                               "ORDER BY message_id")),
                 QStringList({"back", "one", "twice"}));
        QCOMPARE(backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries "
                                              "WHERE envelope IS NOT NULL")),
                 0);
        QCOMPARE(listedSizes(*storage, "dlq").value("one"), one.envelope.size());
    }
    RecoveredState state;
    auto storage = open(backend, &state);
    QVERIFY(storage);
    QCOMPARE(recoveredEnvelopes(state, "dlq"),
             (QMap<QString, QByteArray>{{"one", one.envelope}, {"twice", twice.envelope}}));
    QCOMPARE(recoveredEnvelopes(state, "dlq2"),
             (QMap<QString, QByteArray>{{"twice", twice.envelope}}));
    QCOMPARE(recoveredEnvelopes(state, "q1"), (QMap<QString, QByteArray>{{"back", back.envelope}}));

    // Requeued from the dead-letter queue's backlog: counted with its envelope's size.
    const auto requeued = waitForValue<Result<QList<RequeuedBacklog>>>(
        [&](auto done) { storage->requeueBacklogDeadLetters("dlq", 0, {}, done); });
    QVERIFY(requeued && requeued->ok());
    QCOMPARE(requeued->value().size(), 1);
    QCOMPARE(requeued->value()[0].queue, QStringLiteral("q1"));
    QCOMPARE(requeued->value()[0].messages, qint64(2));
    QCOMPARE(requeued->value()[0].bytes, one.envelope.size() + twice.envelope.size());

    for (const char *id : {"one", "twice", "back"})
        storage->markAcknowledged("q1", id);
    storage->markAcknowledged("dlq2", "twice");
    storage->flushDeliveryUpdates();
    QTRY_COMPARE_WITH_TIMEOUT(backend.count(QStringLiteral("SELECT COUNT(*) FROM queue_entries")),
                              0, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(backend.count(QStringLiteral("SELECT COUNT(*) FROM message_bodies")),
                              0, Timeout);
}

void tst_StorageEnvelopes::rowsFromBeforeMigration14()
{
    BACKEND(backend);
    const QByteArray envelope = R"({"message_id":"old","ciphertext":"AAEC"})";
    {
        auto storage = open(backend);
        QVERIFY(storage);
    }
    // The rows as every writer before migration 14 left them: the envelope in message_bodies,
    // the entries without one.
    const QString bytes = backend.isPostgres()
                              ? QStringLiteral("'\\x%1'::bytea").arg(envelope.toHex())
                              : QStringLiteral("X'%1'").arg(envelope.toHex());
    for (const char *id : {"old-1", "old-2", "old-3"}) {
        QVERIFY(backend.exec(
            QStringLiteral("INSERT INTO message_metadata (message_id, client_id, exchange, "
                           "routing_key, sent_time) VALUES ('%1', 'publisher-svc-1', 'orders', "
                           "'key', '2026-12-01T10:00:00.000Z')")
                .arg(id)));
        QVERIFY(backend.exec(
            QStringLiteral("INSERT INTO message_bodies (message_id, envelope) VALUES ('%1', %2)")
                .arg(id, bytes)));
        QVERIFY(backend.exec(
            QStringLiteral("INSERT INTO queue_entries (queue, message_id) VALUES ('q1', '%1')")
                .arg(id)));
    }
    QVERIFY(backend.exec(
        QStringLiteral("INSERT INTO queue_entries (queue, message_id) VALUES ('q2', 'old-3')")));

    RecoveredState state;
    auto storage = open(backend, &state);
    QVERIFY(storage);
    QCOMPARE(
        recoveredEnvelopes(state, "q1"),
        (QMap<QString, QByteArray>{{"old-1", envelope}, {"old-2", envelope}, {"old-3", envelope}}));
    QCOMPARE(listedSizes(*storage, "q1").value("old-1"), envelope.size());

    // New and old rows side by side in one queue.
    const MessageRecord fresh = message("new", {"q1"});
    QCOMPARE(outcomes(publishAndWait(*storage, {fresh})),
             QList<PublishOutcome>{PublishOutcome::Stored});
    const QList<QueueEntry> page = firstPage(*storage, "q1");
    QCOMPARE(page.size(), 4);
    QCOMPARE(page[0].envelope, envelope);
    QCOMPARE(page[3].envelope, fresh.envelope);

    // An ack takes the old envelope with the entry, a dead-letter move keeps it, a purge takes
    // those only q1 held.
    storage->markAcknowledged("q1", "old-1");
    storage->flushDeliveryUpdates();
    QTRY_COMPARE_WITH_TIMEOUT(backend.count(QStringLiteral("SELECT COUNT(*) FROM message_bodies "
                                                           "WHERE message_id = 'old-1'")),
                              0, Timeout);
    QVERIFY(statusOf([&](auto done) {
        storage->moveEntries({{"q1", "old-2", {"dlq"}, "rejected", "q1", fresh.sentTime, 1}}, done);
    }));
    QVERIFY(statusOf([&](auto done) { storage->purgeQueue("q1", done); }));
    QCOMPARE(backend.column(QStringLiteral("SELECT message_id FROM message_bodies "
                                           "ORDER BY message_id")),
             QStringList({"old-2", "old-3"})); // in dlq, and still in q2
    storage.reset();

    auto again = open(backend, &state);
    QVERIFY(again);
    QCOMPARE(recoveredEnvelopes(state, "dlq"), (QMap<QString, QByteArray>{{"old-2", envelope}}));
    QCOMPARE(recoveredEnvelopes(state, "q2"), (QMap<QString, QByteArray>{{"old-3", envelope}}));
}

QTEST_GUILESS_MAIN(tst_StorageEnvelopes)
#include "tst_storageenvelopes.moc"
