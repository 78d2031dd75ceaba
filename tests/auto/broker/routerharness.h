#pragma once
// A real Router on an in-memory store (routerfakes.h) with a manual clock, for the unit tests of
// the topology registry and the publish coordinator.

#include <memory>

#include <QTest>

#include "core/router.h"
#include "limits/clock.h"
#include "limits/memorybudget.h"
#include "refusaltext.h"
#include "routerfakes.h"

namespace cmq::test {

struct RouterHarness
{
    explicit RouterHarness(const Config::Performance &performance = {}, qint64 budgetBytes = 0)
        : memory(budgetBytes),
          router(std::make_unique<Router>(store, performance, memory, nullptr, &clock))
    {
    }

    // Exchange "ex" and queue "q" bound to it with "rk", all committed.
    void declareBoundQueue(const QString &queue = QStringLiteral("q"))
    {
        router->declareExchange("ex", "sender_1", [](Verdict s) { QVERIFY(s); });
        router->declareQueue(queue, "receiver_1", [](Verdict s) { QVERIFY(s); });
        router->bind(queue, "ex", "rk", [](Verdict s) { QVERIFY(s); });
    }

    // Publishes and returns the outcomes once `done` ran (not before the store commits).
    void publish(const QByteArray &id, const QByteArray &envelope, PublishOutcomes *out,
                 const QString &routingKey = QStringLiteral("rk"))
    {
        router->publish("sender_1", "ex", routingKey, {Router::Publication{id, envelope}},
                        [out](PublishOutcomes outcomes) { *out = std::move(outcomes); });
    }
    // Publishes and commits: the message is in its queues afterwards.
    void publishCommitted(const QByteArray &id, qsizetype bytes)
    {
        PublishOutcomes out;
        publish(id, QByteArray(bytes, 'x'), &out);
        store.commitAll();
        QCOMPARE(out.size(), 1);
        QCOMPARE(out[0].kind, PublishOutcome::Kind::Stored);
    }

    FakeRouterStore store;
    limits::MemoryBudget memory;
    limits::ManualClock clock;
    std::unique_ptr<Router> router;
};

} // namespace cmq::test
