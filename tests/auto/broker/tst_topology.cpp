// The router's topology registry against an in-memory store: topology applied only once stored,
// the per-CN quotas with their messages, routing by exact key, and exchange types restored and
// declared with their type. No database, no sockets.

#include <QtTest>

#include "core/exchangetype.h"
#include "core/router.h"
#include "routerharness.h"

using namespace cmq;
using cmq::test::RouterHarness;

class tst_Topology : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void topologyIsAppliedOnlyOnceStored();
    void quotas_data();
    void quotas();
    void routeOnlyMatchesTheExactKey();
    void unknownStoredExchangeTypeRoutesAsDirect();
    void exchangeTypesRouteAndKeepTheirType();
};

void tst_Topology::topologyIsAppliedOnlyOnceStored()
{
    RouterHarness h;
    h.store.holdJobs = true;
    Verdict declared = Refusal::storageFailed("not yet");
    h.router->declareQueue("q", "receiver_1", [&declared](Verdict s) { declared = s; });
    QVERIFY(!h.router->hasQueue("q"));
    h.store.runJobs();
    QVERIFY(declared);
    QVERIFY(h.router->hasQueue("q"));

    h.store.nextStatus = failure("disk full");
    Verdict failed = accepted();
    h.router->declareExchange("ex", "sender_1", [&failed](Verdict s) { failed = s; });
    h.store.runJobs();
    QCOMPARE(test::refusalText(failed), QStringLiteral("disk full"));
    QVERIFY(h.router->exchanges().isEmpty());
    QCOMPARE(h.store.calls, (QStringList{"saveQueue q 10000 drop-head", "saveExchange ex direct"}));
}

void tst_Topology::quotas_data()
{
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("error");
    QTest::newRow("queues") << "queue"
                            << "Queue quota of 'receiver_1' reached (1 queues)";
    QTest::newRow("exchanges") << "exchange"
                               << "Exchange quota of 'receiver_1' reached (1 exchanges)";
    QTest::newRow("bindings") << "binding"
                              << "Binding quota of 'receiver_1' reached (1 bindings)";
}

void tst_Topology::quotas()
{
    QFETCH(QString, what);
    QFETCH(QString, error);
    Config::Performance p;
    p.maxQueuesPerCn = p.maxExchangesPerCn = p.maxBindingsPerCn = 1;
    RouterHarness h(p);
    Router &r = *h.router;
    Verdict second = accepted();
    const auto keep = [&second](Verdict s) { second = s; };
    const auto ok = [](Verdict s) { QVERIFY(s); };
    if (what == "queue") {
        r.declareQueue("q1", "receiver_1", ok);
        r.declareQueue("q1", "receiver_1", ok); // re-declaring holds nothing more
        r.declareQueue("q2", "receiver_1", keep);
    } else if (what == "exchange") {
        r.declareExchange("e1", "receiver_1", ok);
        r.declareExchange("e2", "receiver_1", keep);
    } else {
        r.declareExchange("e1", "sender_1", ok);
        r.declareQueue("q1", "receiver_1", ok);
        r.bind("q1", "e1", "k1", ok);
        r.bind("q1", "e1", "k2", keep);
    }
    QCOMPARE(test::refusalText(second), error);
}

void tst_Topology::routeOnlyMatchesTheExactKey()
{
    RouterHarness h;
    h.declareBoundQueue("q1");
    h.router->declareQueue("q2", "receiver_2", [](Verdict s) { QVERIFY(s); });
    h.router->bind("q2", "ex", "rk", [](Verdict s) { QVERIFY(s); });
    h.router->bind("q2", "ex", "other", [](Verdict s) { QVERIFY(s); });
    const QList<Queue *> both = h.router->topology().route("ex", "rk");
    QCOMPARE(both.size(), 2);
    QCOMPARE(both[0]->name(), QStringLiteral("q1")); // binding order
    QCOMPARE(h.router->topology().route("ex", "other").size(), 1);
    QVERIFY(h.router->topology().route("ex", "RK").isEmpty());
    QVERIFY(h.router->topology().route("nope", "rk").isEmpty());

    // One message routed to two queues is held once in the memory budget.
    h.publishCommitted("m1", 100);
    QCOMPARE(h.memory.messageBytes(), 100);
}

void tst_Topology::unknownStoredExchangeTypeRoutesAsDirect()
{
    RouterHarness h;
    storage::RecoveredState state;
    state.exchanges.append({"ex", "headers", "sender_1"});
    state.queues.append({"q", "receiver_1", 0, "drop-head"});
    state.bindings.append({"q", "ex", "rk"});
    state.entries.append({"q", "m1", "sender_1", "ex", "rk", "{}", {}, true});
    h.router->restore(state);
    QCOMPARE(h.router->exchanges().value("ex").type, QStringLiteral("headers"));
    QCOMPARE(h.router->topology().route("ex", "rk").size(), 1);
    QCOMPARE(h.router->queues().value("q")->maxLength(), 10000);
    QCOMPARE(h.router->queues().value("q")->readyCount(), 1);
    QVERIFY(h.router->queues().value("q")->ready().front().redelivered);
    QCOMPARE(h.memory.messageBytes(), 2);
}

void tst_Topology::exchangeTypesRouteAndKeepTheirType()
{
    RouterHarness h;
    const auto ok = [](Verdict s) { QVERIFY2(s, qPrintable(test::refusalText(s))); };
    h.router->declareExchange("fan", "receiver_1", ok, *findExchangeType(u"fanout"));
    h.router->declareExchange("top", "receiver_1", ok, *findExchangeType(u"topic"));
    QCOMPARE(h.router->exchanges().value("fan").type, QStringLiteral("fanout"));
    QVERIFY(h.store.calls.contains(QStringLiteral("saveExchange top topic")));
    // The same type again: success; another type (none is direct): an error, nothing changed.
    h.router->declareExchange("fan", "receiver_2", ok, *findExchangeType(u"fanout"));
    Verdict redeclared = accepted();
    h.router->declareExchange("fan", "receiver_1", [&](Verdict s) { redeclared = s; });
    QCOMPARE(test::refusalText(redeclared),
             QStringLiteral("Exchange 'fan' exists with type fanout, not direct"));
    QCOMPARE(h.router->exchanges().value("fan").type, QStringLiteral("fanout"));
    QCOMPARE(h.router->exchanges().value("fan").creator, QStringLiteral("receiver_1"));

    for (const char *q : {"q1", "q2", "q3"}) {
        h.router->declareQueue(q, "receiver_1", ok);
        h.router->bind(q, "fan", "ignored", ok);
    }
    h.router->bind("q1", "top", "a.*", ok);
    h.router->bind("q2", "top", "a.#", ok);
    h.router->bind("q3", "top", "#.z", ok);
    const auto names = [](const QList<Queue *> &queues) {
        QStringList out;
        for (const Queue *q : queues)
            out << q->name();
        out.sort();
        return out;
    };
    QCOMPARE(names(h.router->topology().route("fan", "x")), (QStringList{"q1", "q2", "q3"}));
    QCOMPARE(names(h.router->topology().route("top", "a.b")), (QStringList{"q1", "q2"}));
    QCOMPARE(names(h.router->topology().route("top", "a.b.z")), (QStringList{"q2", "q3"}));

    // A deleted queue leaves every index.
    qint64 removed = 0;
    QVERIFY(h.router->topology().takeQueue("q2", &removed));
    QCOMPARE(removed, 2);
    QCOMPARE(names(h.router->topology().route("fan", "x")), (QStringList{"q1", "q3"}));
    QCOMPARE(names(h.router->topology().route("top", "a.b.z")), QStringList{"q3"});

    // Restored from the store, the types route as before.
    RouterHarness restored;
    storage::RecoveredState state;
    state.exchanges.append({"top", "topic", "receiver_1"});
    state.queues.append({"q1", "receiver_1", 0, "drop-head"});
    state.bindings.append({"q1", "top", "a.*"});
    restored.router->restore(state);
    QCOMPARE(names(restored.router->topology().route("top", "a.b")), QStringList{"q1"});
}

QTEST_GUILESS_MAIN(tst_Topology)
#include "tst_topology.moc"
