// The router's publish coordinator against an in-memory store (the topology registry is
// tst_topology): every outcome of a publish with its counters and reply lines, commits that settle
// the publishes of the same id waiting on them, admission under reject-publish counting what is in
// flight, drop-head eviction, and the admin purge and delete. No database, no sockets.

#include <QtTest>

#include "core/router.h"
#include "handlers/handlers.h"
#include "routerharness.h"

using namespace cmq;
using cmq::test::FakeEndpoint;
using cmq::test::FakeRouterStore;
using cmq::test::RouterHarness;
using Kind = PublishOutcome::Kind;

Q_DECLARE_METATYPE(cmq::PublishOutcome::Kind)
Q_DECLARE_METATYPE(cmq::storage::PublishOutcome)

namespace {

Config::Performance performance(const QString &overflow, qint64 maxLength, qint64 maxBytes)
{
    Config::Performance p;
    p.overflowPolicy = overflow;
    p.maxQueueSize = maxLength;
    p.maxQueueBytes = maxBytes;
    return p;
}

} // namespace

class tst_Router : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void publishOutcome_data();
    void publishOutcome();
    void inflightDuplicateFollowsFirstCommit_data();
    void inflightDuplicateFollowsFirstCommit();
    void inflightCountsTowardsRejectPublish();
    void batchAnswersInOrderOnceAllAreKnown();
    void dropHeadEvicts_data();
    void dropHeadEvicts();
    void lowerDropHeadPolicyEvictsAtOnce();
    void purgeAndDelete();
};

void tst_Router::publishOutcome_data()
{
    QTest::addColumn<bool>("bound");
    QTest::addColumn<QString>("overflow");
    QTest::addColumn<qint64>("maxLength");
    QTest::addColumn<qint64>("maxBytes");
    QTest::addColumn<qint64>("budget");
    QTest::addColumn<int>("prefill"); // messages p0, p1, ... of 100 bytes already queued
    QTest::addColumn<QByteArray>("id");
    QTest::addColumn<int>("bytes");
    QTest::addColumn<storage::PublishOutcome>("commitAs"); // if it gets as far as the store
    QTest::addColumn<Kind>("kind");
    QTest::addColumn<QByteArray>("line");      // publish
    QTest::addColumn<QByteArray>("batchLine"); // publish_batch
    QTest::addColumn<int>("depthAfter");

    const qint64 gib = qint64(1) << 30;
    const qint64 mib = qint64(1) << 20;
    const auto stored = storage::PublishOutcome::Stored;
    QTest::newRow("stored") << true << "drop-head" << qint64(10) << gib << qint64(0) << 0
                            << QByteArray("m1") << 100 << stored << Kind::Stored
                            << QByteArray("ACK m1\n") << QByteArray("ACK m1\n") << 1;
    QTest::newRow("duplicate of a queued message")
        << true << "drop-head" << qint64(10) << gib << qint64(0) << 1 << QByteArray("p0") << 100
        << stored << Kind::Duplicate << QByteArray("Error: Duplicate message p0 ignored\n")
        << QByteArray("Error: Duplicate message p0 ignored for message p0\n") << 1;
    QTest::newRow("duplicate known to the database")
        << true << "drop-head" << qint64(10) << gib << qint64(0) << 0 << QByteArray("m1") << 100
        << storage::PublishOutcome::Duplicate << Kind::Duplicate
        << QByteArray("Error: Duplicate message m1 ignored\n")
        << QByteArray("Error: Duplicate message m1 ignored for message m1\n") << 0;
    QTest::newRow("unroutable")
        << false << "drop-head" << qint64(10) << gib << qint64(0) << 0 << QByteArray("m1") << 100
        << stored << Kind::Unroutable
        << QByteArray("Error: No queues bound to exchange 'ex' with routing key 'rk'\n")
        << QByteArray("Error: No queues bound to exchange 'ex' with routing key 'rk' for "
                      "message m1\n")
        << 0;
    QTest::newRow("queue full by count")
        << true << "reject-publish" << qint64(2) << gib << qint64(0) << 2 << QByteArray("m1") << 100
        << stored << Kind::QueueFull
        << QByteArray("Error: Queue 'q' is full (2 messages, overflow reject-publish): message "
                      "m1 rejected\n")
        << QByteArray("Error: Queue 'q' is full (2 messages, overflow reject-publish): message "
                      "m1 rejected for message m1\n")
        << 2;
    QTest::newRow("queue full by bytes")
        << true << "reject-publish" << qint64(10) << qint64(250) << qint64(0) << 2
        << QByteArray("m1") << 100 << stored << Kind::QueueFull
        << QByteArray("Error: Queue 'q' is full (250 bytes, overflow reject-publish): message "
                      "m1 rejected\n")
        << QByteArray("Error: Queue 'q' is full (250 bytes, overflow reject-publish): message "
                      "m1 rejected for message m1\n")
        << 2;
    QTest::newRow("room under reject-publish")
        << true << "reject-publish" << qint64(3) << qint64(300) << qint64(0) << 2
        << QByteArray("m1") << 100 << stored << Kind::Stored << QByteArray("ACK m1\n")
        << QByteArray("ACK m1\n") << 3;
    QTest::newRow("too large for the queue")
        << true << "drop-head" << qint64(10) << qint64(50) << qint64(0) << 0 << QByteArray("m1")
        << 100 << stored << Kind::TooLarge
        << QByteArray("Error: Message m1 of 100 bytes exceeds queue 'q' byte limit (50 bytes, "
                      "performance.max_queue_bytes)\n")
        << QByteArray("Error: Message m1 of 100 bytes exceeds queue 'q' byte limit (50 bytes, "
                      "performance.max_queue_bytes) for message m1\n")
        << 0;
    // Below 90% of the budget a message that does not fit is refused without an alarm.
    QTest::newRow("does not fit the memory budget")
        << true << "drop-head" << qint64(10) << gib << mib << 1 << QByteArray("m1") << int(mib)
        << stored << Kind::MemoryAlarm
        << QByteArray("Error: Message m1 of 1048576 bytes does not fit in the broker's memory "
                      "budget (0.0 MiB of 1.0 MiB held, performance.memory_budget_mb)\n")
        << QByteArray("Error: Message m1 of 1048576 bytes does not fit in the broker's memory "
                      "budget (0.0 MiB of 1.0 MiB held, performance.memory_budget_mb) for "
                      "message m1\n")
        << 1;
    QTest::newRow("memory alarm")
        << true << "drop-head" << qint64(10) << gib << qint64(1000) << 10 << QByteArray("m1") << 100
        << stored << Kind::MemoryAlarm
        << QByteArray("Error: Memory alarm: the broker holds 0.0 MiB of its 0.0 MiB budget "
                      "(performance.memory_budget_mb): message m1 rejected\n")
        << QByteArray("Error: Memory alarm: the broker holds 0.0 MiB of its 0.0 MiB budget "
                      "(performance.memory_budget_mb): message m1 rejected for message m1\n")
        << 10;
    QTest::newRow("storage failed")
        << true << "drop-head" << qint64(10) << gib << qint64(0) << 0 << QByteArray("m1") << 100
        << storage::PublishOutcome::Failed << Kind::StorageFailed
        << QByteArray("Error: storage unavailable\n")
        << QByteArray("Error: storage unavailable for message m1\n") << 0;
}

void tst_Router::publishOutcome()
{
    QFETCH(bool, bound);
    QFETCH(QString, overflow);
    QFETCH(qint64, maxLength);
    QFETCH(qint64, maxBytes);
    QFETCH(qint64, budget);
    QFETCH(int, prefill);
    QFETCH(QByteArray, id);
    QFETCH(int, bytes);
    QFETCH(storage::PublishOutcome, commitAs);
    QFETCH(Kind, kind);
    QFETCH(QByteArray, line);
    QFETCH(QByteArray, batchLine);
    QFETCH(int, depthAfter);

    RouterHarness h(performance(overflow, maxLength, maxBytes), budget);
    if (bound) {
        h.declareBoundQueue();
    } else {
        h.router->declareExchange("ex", "sender_1", [](Verdict s) { QVERIFY(s); });
        h.router->declareQueue("q", "receiver_1", [](Verdict s) { QVERIFY(s); });
    }
    for (int i = 0; i < prefill; ++i)
        h.publishCommitted("p" + QByteArray::number(i), 100);
    const RouterStats before = h.router->stats();

    PublishOutcomes out;
    h.publish(id, QByteArray(bytes, 'x'), &out);
    const bool reachedStore = !h.store.publishes.isEmpty();
    if (reachedStore) {
        QVERIFY(out.isEmpty()); // no outcome before the commit
        h.store.commit(commitAs, commitAs == storage::PublishOutcome::Failed
                                     ? QStringLiteral("storage unavailable")
                                     : QString());
    }
    QCOMPARE(out.size(), 1);
    QCOMPARE(out[0].kind, kind);
    QCOMPARE(out[0].messageId, id);
    QCOMPARE(handlers::publishReplies(out, "ex", "rk", false), line);
    QCOMPARE(handlers::publishReplies(out, "ex", "rk", true), batchLine);

    const RouterStats &after = h.router->stats();
    QCOMPARE(after.routed - before.routed, quint64(kind == Kind::Stored));
    QCOMPARE(after.duplicates - before.duplicates, quint64(kind == Kind::Duplicate));
    QCOMPARE(after.unroutable - before.unroutable, quint64(kind == Kind::Unroutable));
    const bool rejected = kind == Kind::QueueFull || kind == Kind::TooLarge ||
                          kind == Kind::MemoryAlarm || kind == Kind::StorageFailed;
    QCOMPARE(after.rejected - before.rejected, quint64(rejected));
    {
        const Queue *queue = h.router->queues().value("q");
        QCOMPARE(queue->depth(), depthAfter);
        QCOMPARE(queue->inflight, 0);
        QCOMPARE(queue->inflightBytes, 0);
        QCOMPARE(queue->bytes(), qint64(prefill) * 100 + (kind == Kind::Stored ? bytes : 0));
        // Exactly what the queues hold, once each; nothing left over from the commit.
        QCOMPARE(h.memory.messageBytes(), queue->bytes());
    }
}

void tst_Router::inflightDuplicateFollowsFirstCommit_data()
{
    QTest::addColumn<storage::PublishOutcome>("firstCommit");
    QTest::addColumn<Kind>("first");
    QTest::addColumn<Kind>("second");
    QTest::addColumn<QByteArray>("secondLine");
    QTest::addColumn<quint64>("duplicates");
    QTest::addColumn<quint64>("rejected");
    QTest::addColumn<bool>("early");
    // With deliver_before_commit the message is in its queue (live) while the commit runs:
    // the resend must still wait for the commit, not be called "Duplicate".
    for (const bool early : {false, true}) {
        const char *mode = early ? " (deliver before commit)" : "";
        QTest::addRow("stored: both ACK%s", mode)
            << storage::PublishOutcome::Stored << Kind::Stored << Kind::Stored
            << QByteArray("ACK m1\n") << quint64(1) << quint64(0) << early;
        QTest::addRow("duplicate: both duplicate%s", mode)
            << storage::PublishOutcome::Duplicate << Kind::Duplicate << Kind::Duplicate
            << QByteArray("Error: Duplicate message m1 ignored\n") << quint64(2) << quint64(0)
            << early;
        QTest::addRow("failed: both failed, never Duplicate%s", mode)
            << storage::PublishOutcome::Failed << Kind::StorageFailed << Kind::StorageFailed
            << QByteArray("Error: storage unavailable\n") << quint64(0) << quint64(2) << early;
    }
}

void tst_Router::inflightDuplicateFollowsFirstCommit()
{
    QFETCH(storage::PublishOutcome, firstCommit);
    QFETCH(Kind, first);
    QFETCH(Kind, second);
    QFETCH(QByteArray, secondLine);
    QFETCH(quint64, duplicates);
    QFETCH(quint64, rejected);
    QFETCH(bool, early);

    Config::Performance settings;
    settings.deliverBeforeCommit = early;
    RouterHarness h(settings);
    h.declareBoundQueue();
    PublishOutcomes a, b;
    h.publish("m1", "{}", &a);
    h.publish("m1", "{}", &b);             // a resend while the first commit is pending
    QCOMPARE(h.store.publishes.size(), 1); // stored once at most
    QVERIFY(a.isEmpty());
    QVERIFY(b.isEmpty());
    h.store.commit(firstCommit, QStringLiteral("storage unavailable"));
    QCOMPARE(a.size(), 1);
    QCOMPARE(b.size(), 1);
    QCOMPARE(a[0].kind, first);
    QCOMPARE(b[0].kind, second);
    QCOMPARE(handlers::publishReplies(b, "ex", "rk", false), secondLine);
    QCOMPARE(h.router->stats().duplicates, duplicates);
    QCOMPARE(h.router->stats().rejected, rejected);
    QCOMPARE(h.router->queues().value("q")->depth(),
             firstCommit == storage::PublishOutcome::Stored ? 1 : 0);
}

void tst_Router::inflightCountsTowardsRejectPublish()
{
    RouterHarness h(performance("reject-publish", 2, 0));
    h.declareBoundQueue();
    PublishOutcomes a, b, c;
    h.publish("m1", "{}", &a);
    h.publish("m2", "{}", &b);
    h.publish("m3", "{}", &c); // two are in flight: the queue is full already
    QCOMPARE(c.size(), 1);
    QCOMPARE(c[0].kind, Kind::QueueFull);
    QCOMPARE(h.router->queues().value("q")->inflight, 2);
    h.store.commitAll();
    QCOMPARE(a[0].kind, Kind::Stored);
    QCOMPARE(b[0].kind, Kind::Stored);
    QCOMPARE(h.router->queues().value("q")->inflight, 0);
}

void tst_Router::batchAnswersInOrderOnceAllAreKnown()
{
    RouterHarness h;
    h.declareBoundQueue();
    h.publishCommitted("known", 10);
    PublishOutcomes out;
    h.router->publish("sender_1", "ex", "rk",
                      {{"m1", "{}"}, {"known", "{}"}, {"m2", "{}"}, {"m1", "{}"}},
                      [&out](PublishOutcomes o) { out = std::move(o); });
    QVERIFY(out.isEmpty()); // "known" is answered, the others wait for the commit
    h.store.commitAll();
    QCOMPARE(out.size(), 4);
    QCOMPARE(handlers::publishReplies(out, "ex", "rk", true),
             QByteArray("ACK m1\nError: Duplicate message known ignored for message known\n"
                        "ACK m2\nACK m1\n"));
    QCOMPARE(h.router->queues().value("q")->readyCount(), 3);
}

void tst_Router::dropHeadEvicts_data()
{
    QTest::addColumn<qint64>("maxLength");
    QTest::addColumn<qint64>("maxBytes");
    QTest::addColumn<QStringList>("evicted");
    QTest::addColumn<int>("ready");
    QTest::newRow("by count") << qint64(2) << qint64(0) << QStringList{"evicted q m1"} << 2;
    QTest::newRow("by bytes") << qint64(10) << qint64(250) << QStringList{"evicted q m1"} << 2;
    QTest::newRow("both at once") << qint64(1) << qint64(150)
                                  << QStringList{"evicted q m1", "evicted q m2"} << 1;
    QTest::newRow("room") << qint64(3) << qint64(300) << QStringList{} << 3;
}

void tst_Router::dropHeadEvicts()
{
    QFETCH(qint64, maxLength);
    QFETCH(qint64, maxBytes);
    QFETCH(QStringList, evicted);
    QFETCH(int, ready);
    RouterHarness h(performance("drop-head", maxLength, maxBytes));
    h.declareBoundQueue();
    for (const char *id : {"m1", "m2", "m3"})
        h.publishCommitted(id, 100);
    Queue *queue = h.router->queues().value("q");
    QCOMPARE(h.store.callsOf("evicted"), evicted);
    QCOMPARE(queue->readyCount(), ready);
    QCOMPARE(h.router->stats().evicted, quint64(evicted.size()));
    QCOMPARE(queue->counters.evicted, quint64(evicted.size()));
    QCOMPARE(queue->bytes(), qint64(ready) * 100);
    QCOMPARE(h.memory.messageBytes(), qint64(ready) * 100);
    QCOMPARE(queue->ready().back().message->id, QByteArray("m3")); // the newest stays
}

void tst_Router::lowerDropHeadPolicyEvictsAtOnce()
{
    RouterHarness h;
    h.declareBoundQueue();
    for (const char *id : {"m1", "m2", "m3"})
        h.publishCommitted(id, 100);
    bool done = false;
    h.router->setQueuePolicy("q", 1, "drop-head", [&done](Verdict s) {
        QVERIFY(s);
        done = true;
    });
    QVERIFY(done);
    QCOMPARE(h.store.callsOf("evicted"), (QStringList{"evicted q m1", "evicted q m2"}));
    QCOMPARE(h.router->queues().value("q")->maxLength(), 1);
    // reject-publish keeps what is there.
    h.router->setQueuePolicy("q", 0, "reject-publish", [](Verdict s) { QVERIFY(s); });
    QCOMPARE(h.router->queues().value("q")->maxLength(), 10000); // 0: the configured default
    QCOMPARE(h.router->queues().value("q")->readyCount(), 1);
}

void tst_Router::purgeAndDelete()
{
    RouterHarness h;
    h.declareBoundQueue();
    for (const char *id : {"m1", "m2", "m3"})
        h.publishCommitted(id, 100);
    FakeEndpoint consumer(1);
    h.router->setPrefetch(&consumer, 1);
    QVERIFY(h.router->consume(&consumer, "q"));
    QCoreApplication::processEvents(); // the dispatch consume() queues
    QCOMPARE(consumer.deliveredIds(), QStringList{"m1"});

    Outcome<qint64> purged = Refusal::storageFailed("not yet");
    h.router->purgeQueue("q", [&purged](Outcome<qint64> r) { purged = std::move(r); });
    QCOMPARE(purged.value(), 2); // the delivery awaiting its ack stays
    QCOMPARE(h.router->queues().value("q")->depth(), 1);
    QCOMPARE(h.memory.messageBytes(), 100);

    Outcome<Router::DeleteOutcome> deleted = Refusal::storageFailed("not yet");
    h.router->deleteQueue("q", [&deleted](Outcome<Router::DeleteOutcome> r) { deleted = r; });
    QCOMPARE(deleted.value().messagesDropped, 1);
    QCOMPARE(deleted.value().consumersCancelled, 1);
    QCOMPARE(deleted.value().bindingsRemoved, 1);
    QVERIFY(!h.router->hasQueue("q"));
    QVERIFY(h.router->bindings().isEmpty());
    QVERIFY(!h.router->isConsuming(&consumer));
    QVERIFY(!h.router->awaitsAck(&consumer, "m1"));
    QCOMPARE(h.memory.messageBytes(), 0);
    QCOMPARE(h.store.callsOf("purgeQueue"), QStringList{"purgeQueue q"});

    h.router->deleteQueue("q", [&deleted](Outcome<Router::DeleteOutcome> r) { deleted = r; });
    QCOMPARE(test::refusalText(deleted), QStringLiteral("Queue 'q' not found"));
}

QTEST_GUILESS_MAIN(tst_Router)
#include "tst_router.moc"
