// The delivery engine against an in-memory store and fake connections: round robin under
// prefetch, ack and nack with and without requeue, the order redeliveries come back in (nack,
// ack timeout, a closed connection, resend), fetch, slow consumers, and a subscription whose
// connection closed before its queue was declared. No database, no sockets.

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

struct Harness
{
    explicit Harness(const Config::Performance &performance = {})
        : router(std::make_unique<Router>(store, performance, memory, nullptr, &clock))
    {
        router->declareExchange("ex", "sender_1", [](Verdict s) { QVERIFY(s); });
        router->declareQueue("q", "receiver_1", [](Verdict s) { QVERIFY(s); });
        router->bind("q", "ex", "rk", [](Verdict s) { QVERIFY(s); });
    }
    void publish(const QStringList &ids)
    {
        for (const QString &id : ids) {
            router->publish("sender_1", "ex", "rk", {{id.toUtf8(), "{}"}},
                            [](const PublishOutcomes &o) { QVERIFY(o.value(0).stored()); });
        }
        store.commitAll();
    }
    void consume(FakeEndpoint &endpoint, int prefetch)
    {
        router->setPrefetch(&endpoint, prefetch);
        QVERIFY(router->consume(&endpoint, "q"));
        QCoreApplication::processEvents(); // the dispatch consume() queues behind its reply
    }
    // What a fetch answers: the delivery lines, or nothing.
    QByteArray fetch(FakeEndpoint &endpoint, const QString &queue = QStringLiteral("q"))
    {
        const std::optional<ReadyMessage> fetched = router->fetch(&endpoint, queue);
        return fetched ? protocol::reply::delivery(fetched->message->id, fetched->message->envelope,
                                                   fetched->redelivered)
                       : QByteArray();
    }
    Queue &queue() { return *router->queues().value("q"); }
    QStringList readyIds()
    {
        QStringList ids;
        for (const ReadyMessage &r : queue().ready())
            ids.append(QString::fromUtf8(r.message->id) + (r.redelivered ? "*" : ""));
        return ids;
    }

    FakeRouterStore store;
    limits::MemoryBudget memory;
    limits::ManualClock clock;
    std::unique_ptr<Router> router;
};

} // namespace

class tst_DeliveryEngine : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void expiredMessagesAreNeverDelivered();
    void roundRobinUnderPrefetch_data();
    void roundRobinUnderPrefetch();
    void settle_data();
    void settle();
    void ackIsScopedToTheDeliveringConnection();
    void closedEndpointRequeuesInDeliveryOrder();
    void ackTimeoutRequeues();
    void resendRequeuesWhatAwaitsAnAck_data();
    void resendRequeuesWhatAwaitsAnAck();
    void fetchAwaitsAckLikeAPush();
    void slowConsumerIsSkipped();
    void declareAndConsumeAfterCloseRegistersNothing();
    void declareAndConsumeSubscribesOnceDeclared();
};

void tst_DeliveryEngine::roundRobinUnderPrefetch_data()
{
    QTest::addColumn<int>("prefetch");
    QTest::addColumn<int>("messages");
    QTest::addColumn<QStringList>("first");
    QTest::addColumn<QStringList>("second");
    QTest::addColumn<QStringList>("ready");
    QTest::newRow("unlimited") << 0 << 5 << QStringList{"m1", "m3", "m5"} << QStringList{"m2", "m4"}
                               << QStringList{};
    QTest::newRow("prefetch 1") << 1 << 5 << QStringList{"m1"} << QStringList{"m2"}
                                << QStringList{"m3", "m4", "m5"};
    QTest::newRow("prefetch 2") << 2 << 5 << QStringList{"m1", "m3"} << QStringList{"m2", "m4"}
                                << QStringList{"m5"};
    QTest::newRow("fewer messages than room")
        << 3 << 1 << QStringList{"m1"} << QStringList{} << QStringList{};
}

void tst_DeliveryEngine::roundRobinUnderPrefetch()
{
    QFETCH(int, prefetch);
    QFETCH(int, messages);
    QFETCH(QStringList, first);
    QFETCH(QStringList, second);
    QFETCH(QStringList, ready);
    Harness h;
    FakeEndpoint a(1), b(2);
    h.consume(a, prefetch);
    h.consume(b, prefetch);
    QStringList ids;
    for (int i = 1; i <= messages; ++i)
        ids.append(QStringLiteral("m%1").arg(i));
    h.publish(ids);
    QCOMPARE(a.deliveredIds(), first);
    QCOMPARE(b.deliveredIds(), second);
    QCOMPARE(h.readyIds(), ready);
    QCOMPARE(h.router->endpointInfo(&a).unacked, first.size());
    QCOMPARE(h.router->stats().delivered, quint64(first.size() + second.size()));
    QCOMPARE(h.store.callsOf("delivered").size(), first.size() + second.size());

    if (!ready.isEmpty()) {
        // An ack frees one slot: the next ready message goes to that consumer.
        QVERIFY(h.router->ack(&a, first.first().toUtf8()));
        QCOMPARE(a.deliveredIds().size(), first.size() + 1);
        QCOMPARE(a.deliveredIds().last(), ready.first());
    }
}

void tst_DeliveryEngine::settle_data()
{
    QTest::addColumn<QString>("how"); // ack | nack | requeue
    QTest::addColumn<QStringList>("ready");
    QTest::addColumn<QString>("storeCall");
    QTest::addColumn<qint64>("bytes"); // ready and unacked envelopes of 2 bytes each
    QTest::newRow("ack") << "ack" << QStringList{"m3"} << "acknowledged q m1" << qint64(4);
    QTest::newRow("nack drops") << "nack" << QStringList{"m3"} << "evicted q m1" << qint64(4);
    QTest::newRow("nack requeue goes to the head, redelivered")
        << "requeue" << QStringList{"m1*", "m3"} << QString() << qint64(6);
}

void tst_DeliveryEngine::settle()
{
    QFETCH(QString, how);
    QFETCH(QStringList, ready);
    QFETCH(QString, storeCall);
    QFETCH(qint64, bytes);
    Harness h;
    h.publish({"m1", "m2", "m3"});
    FakeEndpoint a(1);
    // Fetched deliveries have no consumer to push the requeued one to again.
    QCOMPARE(h.fetch(a), QByteArray("Message: m1 {}\n"));
    QCOMPARE(h.fetch(a), QByteArray("Message: m2 {}\n"));
    QVERIFY(h.router->awaitsAck(&a, "m1"));
    const Verdict settled =
        how == "ack" ? h.router->ack(&a, "m1") : h.router->nack(&a, "m1", how == "requeue");
    QVERIFY(settled);
    QVERIFY(!h.router->awaitsAck(&a, "m1"));
    QVERIFY(h.router->awaitsAck(&a, "m2"));
    QCOMPARE(h.readyIds(), ready);
    QCOMPARE(h.store.callsOf("acknowledged") + h.store.callsOf("evicted"),
             storeCall.isEmpty() ? QStringList{} : QStringList{storeCall});
    QCOMPARE(h.queue().bytes(), bytes);
    QCOMPARE(h.memory.messageBytes(), bytes);
    QCOMPARE(h.router->stats().acknowledged, quint64(how == "ack"));
    QCOMPARE(h.router->stats().nackDropped, quint64(how == "nack"));
    QCOMPARE(h.queue().counters.acknowledged, quint64(how == "ack"));

    // Settled once: a second ack or nack of it is refused.
    QCOMPARE(test::refusalText(h.router->ack(&a, "m1")),
             QStringLiteral("Message m1 is not awaiting acknowledgement from this connection"));
    QCOMPARE(test::refusalText(h.router->nack(&a, "m1", true)),
             QStringLiteral("Message m1 is not awaiting acknowledgement from this connection"));
    if (how == "requeue") {
        QCOMPARE(h.fetch(a), QByteArray("Redelivered: m1\nMessage: m1 {}\n"));
        QCOMPARE(h.router->stats().redelivered, quint64(1));
    }
}

void tst_DeliveryEngine::ackIsScopedToTheDeliveringConnection()
{
    Harness h;
    FakeEndpoint a(1), b(2);
    h.consume(a, 0);
    h.publish({"m1"});
    QVERIFY(!h.router->ack(&b, "m1"));
    QVERIFY(!h.router->awaitsAck(&b, "m1"));
    QVERIFY(h.router->ack(&a, "m1"));
    QCOMPARE(h.queue().depth(), 0);
}

void tst_DeliveryEngine::closedEndpointRequeuesInDeliveryOrder()
{
    Harness h;
    FakeEndpoint a(1), b(2);
    h.consume(a, 3);
    h.publish({"m1", "m2", "m3", "m4"});
    QCOMPARE(a.deliveredIds(), (QStringList{"m1", "m2", "m3"}));
    QVERIFY(h.router->ack(&a, "m2"));
    QCOMPARE(a.deliveredIds().last(), QStringLiteral("m4"));
    h.router->endpointClosed(&a);
    QVERIFY(!h.router->isConsuming(&a));
    QCOMPARE(h.queue().consumers().size(), 0);
    QCOMPARE(h.readyIds(), (QStringList{"m1*", "m3*", "m4*"}));
    h.consume(b, 0);
    QCOMPARE(b.deliveredIds(), (QStringList{"m1*", "m3*", "m4*"}));
    QCOMPARE(h.router->stats().redelivered, quint64(3));
    h.router->endpointClosed(&a); // twice is harmless
}

void tst_DeliveryEngine::ackTimeoutRequeues()
{
    Config::Performance p;
    p.ackTimeoutSec = 2;
    Harness h(p);
    FakeEndpoint a(1);
    h.consume(a, 1);
    h.publish({"m1", "m2"});
    QCOMPARE(a.deliveredIds(), QStringList{"m1"});
    h.clock.advanceMs(1999);
    h.router->delivery().expireUnacked();
    QCOMPARE(h.router->stats().ackTimeouts, quint64(0));
    h.clock.advanceMs(1);
    h.router->delivery().expireUnacked();
    QCOMPARE(h.router->stats().ackTimeouts, quint64(1));
    // Back at the head and, the slot free again, out to the same consumer first.
    QCOMPARE(a.deliveredIds(), (QStringList{"m1", "m1*"}));
    QCOMPARE(h.readyIds(), QStringList{"m2"});
}

void tst_DeliveryEngine::resendRequeuesWhatAwaitsAnAck_data()
{
    QTest::addColumn<QString>("requester");
    QTest::addColumn<bool>("isAdmin");
    QTest::addColumn<QByteArray>("id");
    QTest::addColumn<int>("outcome");
    using R = Router::ResendOutcome;
    QTest::newRow("its sender") << "sender_1" << false << QByteArray("m1") << int(R::Requested);
    QTest::newRow("an admin") << "ops" << true << QByteArray("m1") << int(R::Requested);
    QTest::newRow("someone else") << "sender_2" << false << QByteArray("m1")
                                  << int(R::Unauthorized);
    QTest::newRow("unknown id") << "sender_1" << false << QByteArray("nope") << int(R::NotFound);
}

void tst_DeliveryEngine::resendRequeuesWhatAwaitsAnAck()
{
    QFETCH(QString, requester);
    QFETCH(bool, isAdmin);
    QFETCH(QByteArray, id);
    QFETCH(int, outcome);
    Harness h;
    FakeEndpoint a(1);
    h.consume(a, 0);
    h.publish({"m1"});
    QCOMPARE(int(h.router->resend(requester, isAdmin, id)), outcome);
    const bool requested = outcome == int(Router::ResendOutcome::Requested);
    QCOMPARE(a.deliveredIds(), requested ? (QStringList{"m1", "m1*"}) : QStringList{"m1"});
    QVERIFY(h.router->awaitsAck(&a, "m1"));
}

void tst_DeliveryEngine::fetchAwaitsAckLikeAPush()
{
    Harness h;
    FakeEndpoint a(1);
    QCOMPARE(h.fetch(a), QByteArray());
    QCOMPARE(h.fetch(a, "missing"), QByteArray());
    h.publish({"m1"});
    QCOMPARE(h.fetch(a), QByteArray("Message: m1 {}\n"));
    QCOMPARE(h.router->endpointInfo(&a).unacked, 1);
    QVERIFY(!h.router->isConsuming(&a));
    h.router->endpointClosed(&a);
    QCOMPARE(h.readyIds(), QStringList{"m1*"});
}

void tst_DeliveryEngine::slowConsumerIsSkipped()
{
    Harness h;
    FakeEndpoint a(1), b(2);
    h.consume(a, 0);
    h.consume(b, 0);
    a.writable = false;
    h.publish({"m1", "m2"});
    QCOMPARE(a.deliveredIds(), QStringList{});
    QCOMPARE(b.deliveredIds(), (QStringList{"m1", "m2"}));
    b.writable = false;
    h.publish({"m3"});
    QCOMPARE(h.readyIds(), QStringList{"m3"});
    a.writable = true;
    h.router->endpointWritable(&a);
    QCOMPARE(a.deliveredIds(), QStringList{"m3"});
}

void tst_DeliveryEngine::declareAndConsumeAfterCloseRegistersNothing()
{
    Harness h;
    h.store.holdJobs = true;
    FakeEndpoint a(1);
    Verdict status = accepted();
    bool answered = false;
    h.router->declareAndConsume(&a, "fresh", "receiver_1", [&](Verdict s) {
        status = s;
        answered = true;
    });
    h.router->endpointClosed(&a);
    h.store.runJobs(); // the declare commits after the close
    QVERIFY(answered);
    QCOMPARE(test::refusalText(status),
             QStringLiteral("Connection closed before the subscription"));
    QVERIFY(h.router->hasQueue("fresh")); // declared: it is durable now
    QCOMPARE(h.router->queues().value("fresh")->consumers().size(), 0);
    QVERIFY(!h.router->isConsuming(&a));
}

void tst_DeliveryEngine::declareAndConsumeSubscribesOnceDeclared()
{
    Harness h;
    h.store.holdJobs = true;
    FakeEndpoint a(1);
    Verdict status = Refusal::storageFailed("not yet");
    h.router->declareAndConsume(&a, "fresh", "receiver_1", [&](Verdict s) { status = s; });
    QVERIFY(!h.router->isConsuming(&a));
    h.store.runJobs();
    QVERIFY(status);
    QVERIFY(h.router->isConsuming(&a));
    QCOMPARE(h.router->endpointInfo(&a).consumedQueues, QStringList{"fresh"});
}

// Expiry runs on the wall clock (publish times are stored): a 1 ms TTL, then waiting until the
// clock has passed it.
void tst_DeliveryEngine::expiredMessagesAreNeverDelivered()
{
    Harness h;
    const auto waitPastTtl = [] {
        const qint64 start = QDateTime::currentMSecsSinceEpoch();
        QTRY_VERIFY(QDateTime::currentMSecsSinceEpoch() > start + 2);
    };
    // The queue's TTL: expired at the head, skipped by fetch and counted.
    h.router->setQueuePolicy(
        "q", 0, "drop-head", [](Verdict s) { QVERIFY(s); }, 1);
    QCOMPARE(h.queue().messageTtlMs(), 1);
    h.publish({"m1", "m2"});
    waitPastTtl();
    FakeEndpoint fetcher(1);
    QCOMPARE(h.fetch(fetcher), QByteArray());
    QCOMPARE(h.router->stats().expired, 2u);
    QCOMPARE(h.queue().counters.expired, 2u);
    QCOMPARE(h.queue().bytes(), 0);
    QVERIFY(h.store.calls.contains("evicted q m1"));
    QCOMPARE(h.memory.messageBytes(), 0);

    // An envelope's own TTL, in a queue without one: dropped (at the commit's dispatch or by
    // the sweep, whichever sees it expired first), the next one stays.
    h.router->setQueuePolicy(
        "q", 0, "drop-head", [](Verdict s) { QVERIFY(s); }, 0);
    h.router->publish("sender_1", "ex", "rk", {{"m3", "{}", 1}, {"m4", "{}", 0}},
                      [](const PublishOutcomes &o) { QCOMPARE(o.size(), 2); });
    h.store.commitAll();
    waitPastTtl();
    h.router->delivery().sweepExpired(100);
    QCOMPARE(h.readyIds(), QStringList{"m4"});
    QCOMPARE(h.router->stats().expired, 3u);

    // The shorter of the two TTLs applies (the queue's 1 ms beats m5's own 10 minutes); a
    // budget bounds the sweep.
    h.router->publish("sender_1", "ex", "rk",
                      {{"m5", "{}", 600000}, {"m6", "{}", 0}, {"m7", "{}", 0}},
                      [](const PublishOutcomes &o) { QCOMPARE(o.size(), 3); });
    h.store.commitAll();
    h.router->setQueuePolicy(
        "q", 0, "drop-head", [](Verdict s) { QVERIFY(s); }, 1);
    waitPastTtl();
    QCOMPARE(h.router->delivery().sweepExpired(2), 2);
    QCOMPARE(h.readyIds(), (QStringList{"m6", "m7"}));
    QCOMPARE(h.router->stats().expired, 5u);

    // A consumer never sees an expired message either.
    FakeEndpoint consumer(2);
    h.consume(consumer, 0);
    QVERIFY(consumer.deliveredIds().isEmpty());
    QCOMPARE(h.router->stats().expired, 7u);
}

QTEST_GUILESS_MAIN(tst_DeliveryEngine)
#include "tst_deliveryengine.moc"
