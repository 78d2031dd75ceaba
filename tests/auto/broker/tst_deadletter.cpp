// Dead-lettering in the delivery engine, against an in-memory store: each reason a queue gives
// up on a message for (nack drop, expiry, drop-head overflow when asked, the delivery limit)
// sends the same message (same envelope bytes) to its dead-letter exchange with a record of
// why and where from, through one storage move; nothing moves in memory before that commits,
// and a failed move leaves the message stored where it was. Requeue sends dead letters back.

#include <QtTest>

#include "core/router.h"
#include "limits/clock.h"
#include "limits/memorybudget.h"
#include "refusaltext.h"
#include "routerfakes.h"

using namespace cmq;
using cmq::test::FakeEndpoint;
using cmq::test::FakeRouterStore;

namespace {

const auto ok = [](Verdict s) { QVERIFY2(s.ok(), qPrintable(test::refusalText(s))); };

struct Harness
{
    Harness()
        : router(std::make_unique<Router>(store, Config::Performance{}, memory, nullptr, &clock))
    {
        router->declareExchange("ex", "sender_1", ok);
        router->declareExchange("dlx", "sender_1", ok);
        router->declareQueue("q", "receiver_1", ok);
        router->declareQueue("dlq", "receiver_1", ok);
        router->bind("q", "ex", "rk", ok);
        router->bind("dlq", "dlx", "rk", ok);
    }
    void policy(qint64 maxLength, qint64 ttlMs, const DeadLetterPolicyChange &change)
    {
        router->setQueuePolicy("q", maxLength, "drop-head", ok, ttlMs, change);
    }
    void publish(const QStringList &ids, const QByteArray &envelope = "{\"x\":1}")
    {
        for (const QString &id : ids) {
            router->publish("sender_1", "ex", "rk", {{id.toUtf8(), envelope}},
                            [](const PublishOutcomes &o) { QVERIFY(o.value(0).stored()); });
        }
        store.commitAll();
    }
    Queue &queue(const char *name) { return *router->queues().value(QString::fromLatin1(name)); }
    QStringList ids(const char *name)
    {
        QStringList out;
        for (const ReadyMessage &r : queue(name).ready())
            out.append(QString::fromUtf8(r.message->id));
        return out;
    }

    FakeRouterStore store;
    limits::MemoryBudget memory;
    limits::ManualClock clock;
    std::unique_ptr<Router> router;
};

DeadLetterPolicyChange toDlx(std::optional<qint64> deliveryLimit = {},
                             std::optional<bool> onOverflow = {})
{
    DeadLetterPolicyChange change;
    change.exchange = QStringLiteral("dlx");
    change.deliveryLimit = deliveryLimit;
    change.onOverflow = onOverflow;
    return change;
}

void waitPast(qint64 ms)
{
    const qint64 start = QDateTime::currentMSecsSinceEpoch();
    QTRY_VERIFY(QDateTime::currentMSecsSinceEpoch() > start + ms);
}

} // namespace

class tst_DeadLetter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void eachReason_data();
    void eachReason();
    void nothingMovesBeforeTheCommit();
    void failedMoveLeavesItStored();
    void routedNowhereIsDropped();
    void ownRoutingKeyOrTheQueues();
    void expiredDeadLetterIsNotPassedOn();
    void requeueSendsBack();
    void manyAtOnceAreOneMove();
    void restoredRecordsComeBack();
};

void tst_DeadLetter::eachReason_data()
{
    QTest::addColumn<QString>("how");
    QTest::addColumn<QString>("reason"); // empty: dropped, not dead-lettered
    QTest::addColumn<int>("deliveryCount");
    QTest::newRow("nack drop") << "nack"
                               << "rejected" << 1;
    QTest::newRow("expired") << "expire"
                             << "expired" << 0;
    QTest::newRow("overflow, asked") << "overflow"
                                     << "overflow" << 0;
    QTest::newRow("overflow, not asked") << "overflow-off"
                                         << "" << 0;
    QTest::newRow("delivery limit") << "limit"
                                    << "delivery_limit" << 2;
    QTest::newRow("nack requeue under the limit") << "requeue"
                                                  << "" << 0;
}

void tst_DeadLetter::eachReason()
{
    QFETCH(QString, how);
    QFETCH(QString, reason);
    QFETCH(int, deliveryCount);
    Harness h;
    FakeEndpoint consumer(1);
    const QByteArray envelope = "{\"ciphertext\":\"AAEC\",\"message_id\":\"m1\"}";
    if (how == "nack") {
        h.policy(0, 0, toDlx());
        h.publish({"m1"}, envelope);
        QVERIFY(h.router->fetch(&consumer, "q"));
        QVERIFY(h.router->nack(&consumer, "m1", false));
    } else if (how == "expire") {
        h.policy(0, 1, toDlx());
        h.publish({"m1"}, envelope);
        waitPast(2);
        h.router->delivery().sweepExpired(10); // unless the commit's dispatch dropped it first
    } else if (how == "overflow" || how == "overflow-off") {
        h.policy(1, 0, toDlx({}, how == "overflow"));
        h.publish({"m1"}, envelope);
        h.publish({"m2"}); // evicts m1
        QCOMPARE(h.ids("q"), QStringList{"m2"});
    } else if (how == "limit" || how == "requeue") {
        h.policy(0, 0, toDlx(how == "limit" ? 2 : 3));
        h.publish({"m1"}, envelope);
        for (int i = 0; i < 2; ++i) {
            QVERIFY(h.router->fetch(&consumer, "q"));
            QVERIFY(h.router->nack(&consumer, "m1", true));
        }
    }
    if (reason.isEmpty()) {
        QCOMPARE(h.store.callsOf("move"), QStringList{});
        QCOMPARE(h.ids("dlq"), QStringList{});
        QCOMPARE(h.router->stats().deadLettered[0] + h.router->stats().deadLettered[1] +
                     h.router->stats().deadLettered[2] + h.router->stats().deadLettered[3],
                 0u);
        return;
    }
    QCOMPARE(h.store.callsOf("move"), QStringList{"move q m1 -> dlq " + reason});
    QCOMPARE(h.ids("dlq"), QStringList{"m1"});
    QVERIFY(!h.ids("q").contains("m1"));
    const ReadyMessage &dead = h.queue("dlq").ready().front();
    QCOMPARE(dead.message->envelope, envelope); // the same bytes, never re-encoded
    QVERIFY(dead.deadLetter);
    QCOMPARE(deadLetterReasonName(dead.deadLetter->reason), reason);
    QCOMPARE(dead.deadLetter->originalQueue, "q");
    QCOMPARE(dead.deadLetter->deliveryCount, deliveryCount);
    QVERIFY(qAbs(dead.deadLetter->at.msecsTo(QDateTime::currentDateTimeUtc())) < 60000);
    QCOMPARE(h.router->stats().deadLettered[int(dead.deadLetter->reason)], 1u);
    QCOMPARE(h.queue("q").counters.deadLettered, 1u);
    // Counted once in memory, in the dead-letter queue's bytes only.
    QCOMPARE(h.queue("dlq").bytes(), envelope.size());
    QCOMPARE(h.queue("q").bytes(), h.queue("q").readyCount() * qint64(7));
    // A consumer of the dead-letter queue gets it like any message.
    FakeEndpoint dlqConsumer(2);
    const std::optional<ReadyMessage> fetched = h.router->fetch(&dlqConsumer, "dlq");
    QVERIFY(fetched);
    QCOMPARE(fetched->message->id, "m1");
    QVERIFY(h.router->ack(&dlqConsumer, "m1"));
    QCOMPARE(h.queue("dlq").bytes(), 0);
}

void tst_DeadLetter::nothingMovesBeforeTheCommit()
{
    Harness h;
    h.policy(0, 0, toDlx());
    h.publish({"m1"});
    FakeEndpoint consumer(1);
    QVERIFY(h.router->fetch(&consumer, "q"));
    h.store.holdJobs = true;
    QVERIFY(h.router->nack(&consumer, "m1", false));
    QCOMPARE(h.ids("q"), QStringList{});
    QCOMPARE(h.ids("dlq"), QStringList{});
    QVERIFY(h.memory.messageBytes() > 0); // still held: dedupe and resend still see it
    QCOMPARE(h.store.callsOf("evicted"), QStringList{});
    h.store.runJobs();
    QCOMPARE(h.ids("dlq"), QStringList{"m1"});
}

void tst_DeadLetter::failedMoveLeavesItStored()
{
    Harness h;
    h.policy(0, 0, toDlx());
    h.publish({"m1"});
    FakeEndpoint consumer(1);
    QVERIFY(h.router->fetch(&consumer, "q"));
    h.store.nextStatus = failure("storage unavailable");
    QVERIFY(h.router->nack(&consumer, "m1", false));
    // Not evicted in storage (it comes back in q after a restart), gone from memory.
    QCOMPARE(h.store.callsOf("evicted"), QStringList{});
    QCOMPARE(h.ids("dlq"), QStringList{});
    QCOMPARE(h.memory.messageBytes(), 0);
    QCOMPARE(h.router->stats().deadLettered[0], 0u);
}

void tst_DeadLetter::routedNowhereIsDropped()
{
    Harness h;
    DeadLetterPolicyChange change = toDlx();
    change.routingKey = QStringLiteral("nobody");
    h.policy(0, 0, change);
    h.publish({"m1"});
    FakeEndpoint consumer(1);
    QVERIFY(h.router->fetch(&consumer, "q"));
    QVERIFY(h.router->nack(&consumer, "m1", false));
    QCOMPARE(h.store.callsOf("move"), QStringList{});
    QCOMPARE(h.store.callsOf("evicted"), QStringList{"evicted q m1"});
    QCOMPARE(h.memory.messageBytes(), 0);
}

void tst_DeadLetter::ownRoutingKeyOrTheQueues()
{
    Harness h;
    h.router->declareQueue("dlq2", "receiver_1", ok);
    h.router->bind("dlq2", "dlx", "dead", ok);
    DeadLetterPolicyChange change = toDlx();
    change.routingKey = QStringLiteral("dead");
    h.policy(0, 0, change);
    QCOMPARE(h.queue("q").deadLetterPolicy().routingKey, "dead");
    h.publish({"m1"});
    FakeEndpoint consumer(1);
    QVERIFY(h.router->fetch(&consumer, "q"));
    QVERIFY(h.router->nack(&consumer, "m1", false));
    QCOMPARE(h.ids("dlq2"), QStringList{"m1"});
    QCOMPARE(h.ids("dlq"), QStringList{});
    // A later queue_policy without dead-letter options keeps them.
    h.router->setQueuePolicy("q", 5, "drop-head", ok);
    QCOMPARE(h.queue("q").deadLetterPolicy().exchange, "dlx");
    QCOMPARE(h.queue("q").deadLetterPolicy().routingKey, "dead");
    // An exchange that does not exist is refused, changing nothing.
    DeadLetterPolicyChange missing;
    missing.exchange = QStringLiteral("nope");
    Verdict refused = accepted();
    h.router->setQueuePolicy(
        "q", 5, "drop-head", [&](Verdict s) { refused = s; }, -1, missing);
    QVERIFY(!refused);
    QCOMPARE(test::refusalText(refused), "Exchange 'nope' not found");
    QCOMPARE(h.queue("q").deadLetterPolicy().exchange, "dlx");
}

void tst_DeadLetter::expiredDeadLetterIsNotPassedOn()
{
    // q dead-letters to dlq, dlq back to q, both with a TTL: the dead letter expires in dlq
    // (its publish time is kept) and is dropped there, not sent round again.
    Harness h;
    h.router->bind("q", "dlx", "rk", ok);
    h.policy(0, 1, toDlx());
    h.router->setQueuePolicy("dlq", 0, "drop-head", ok, 1, toDlx());
    h.publish({"m1"});
    waitPast(2);
    h.router->delivery().sweepExpired(10);
    QCOMPARE(h.store.callsOf("move"), QStringList{"move q m1 -> dlq expired"});
    h.router->delivery().sweepExpired(10);
    QCOMPARE(h.store.callsOf("evicted"), QStringList{"evicted dlq m1"});
    QCOMPARE(h.ids("q"), QStringList{});
    QCOMPARE(h.ids("dlq"), QStringList{});
    QCOMPARE(h.memory.messageBytes(), 0);
}

void tst_DeadLetter::manyAtOnceAreOneMove()
{
    // A lower max length evicts five at once: one storage transaction for the five, not five,
    // and each still gets its record once it has committed.
    Harness h;
    h.policy(10, 0, toDlx({}, true));
    h.publish({"m1", "m2", "m3", "m4", "m5", "m6", "m7"});
    h.policy(2, 0, toDlx({}, true));
    QCOMPARE(h.ids("q"), (QStringList{"m6", "m7"}));
    QCOMPARE(h.store.callsOf("move"),
             QStringList{"move q m1 -> dlq overflow;move q m2 -> dlq overflow;"
                         "move q m3 -> dlq overflow;move q m4 -> dlq overflow;"
                         "move q m5 -> dlq overflow"});
    h.store.commitAll();
    QCOMPARE(h.ids("dlq"), (QStringList{"m1", "m2", "m3", "m4", "m5"}));
    for (const ReadyMessage &dead : h.queue("dlq").ready()) {
        QVERIFY(dead.deadLetter);
        QCOMPARE(dead.deadLetter->reason, DeadLetterReason::Overflow);
        QCOMPARE(dead.deadLetter->originalQueue, "q");
    }
    QCOMPARE(h.router->stats().deadLettered[int(DeadLetterReason::Overflow)], 5u);
}

void tst_DeadLetter::requeueSendsBack()
{
    Harness h;
    h.policy(0, 0, toDlx());
    h.publish({"m1", "m2", "m3"});
    FakeEndpoint consumer(1);
    for (const char *id : {"m1", "m2", "m3"}) {
        QVERIFY(h.router->fetch(&consumer, "q"));
        QVERIFY(h.router->nack(&consumer, id, false));
    }
    QCOMPARE(h.ids("dlq"), (QStringList{"m1", "m2", "m3"}));
    std::optional<Outcome<qint64>> moved;
    h.router->requeueDeadLetters("dlq", 2, [&](Outcome<qint64> r) { moved = r; });
    QVERIFY(moved && moved->ok());
    QCOMPARE(moved->value(), 2);
    QCOMPARE(h.store.callsOf("move").last(), "move dlq m1 -> q -;move dlq m2 -> q -");
    QCOMPARE(h.ids("q"), (QStringList{"m1", "m2"}));
    QCOMPARE(h.ids("dlq"), QStringList{"m3"});
    QVERIFY(!h.queue("q").ready().front().deadLetter);
    QCOMPARE(h.router->stats().deadLettersRequeued, 2u);
    // A failed move changes nothing.
    h.store.nextStatus = failure("storage unavailable");
    moved.reset();
    h.router->requeueDeadLetters("dlq", 0, [&](Outcome<qint64> r) { moved = r; });
    QVERIFY(moved && !moved->ok());
    QCOMPARE(h.ids("dlq"), QStringList{"m3"});
    QCOMPARE(h.queue("dlq").bytes(), 7);
    // Nothing to requeue in a queue without dead letters; an unknown queue is an error.
    h.store.nextStatus = success();
    moved.reset();
    h.router->requeueDeadLetters("q", 0, [&](Outcome<qint64> r) { moved = r; });
    QVERIFY(moved && moved->ok());
    QCOMPARE(moved->value(), 0);
    moved.reset();
    h.router->requeueDeadLetters("nope", 0, [&](Outcome<qint64> r) { moved = r; });
    QVERIFY(moved && !moved->ok());
}

void tst_DeadLetter::restoredRecordsComeBack()
{
    FakeRouterStore store;
    limits::MemoryBudget memory;
    Router router(store, Config::Performance{}, memory);
    storage::RecoveredState state;
    storage::QueueRecord q;
    q.name = "q";
    q.owner = "receiver_1";
    q.deadLetterExchange = "dlx";
    q.deliveryLimit = 4;
    storage::QueueRecord dlq;
    dlq.name = "dlq";
    dlq.owner = "receiver_1";
    state.queues = {q, dlq};
    storage::QueueEntry entry;
    entry.queue = "dlq";
    entry.messageId = "m1";
    entry.envelope = "{}";
    entry.sentTime = QDateTime::currentDateTimeUtc();
    state.entries = {entry};
    const QDateTime at = QDateTime::currentDateTimeUtc().addSecs(-5);
    state.deadLetters = {{"dlq", "m1", "delivery_limit", "q", at, 4}};
    router.restore(state);
    QCOMPARE(router.queues().value("q")->deadLetterPolicy().exchange, "dlx");
    QCOMPARE(router.queues().value("q")->deadLetterPolicy().deliveryLimit, 4);
    const ReadyMessage &ready = router.queues().value("dlq")->ready().front();
    QVERIFY(ready.deadLetter);
    QCOMPARE(ready.deadLetter->reason, DeadLetterReason::DeliveryLimit);
    QCOMPARE(ready.deadLetter->originalQueue, "q");
    QCOMPARE(ready.deadLetter->at, at);
    QCOMPARE(ready.deadLetter->deliveryCount, 4);
}

QTEST_GUILESS_MAIN(tst_DeadLetter)
#include "tst_deadletter.moc"
