// restartRequired(): every key a reload cannot apply is reported, and the reloadable ones are
// not. One row per [performance] key, since the router keeps its own copy of that section from
// start-up: a key missing from the check would change nothing and say nothing.

#include <QtTest>

#include "admin/configreload.h"

using cmq::Config;

class tst_ConfigReload : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void performanceKeys_data();
    void performanceKeys();
    void memoryBudgetIsApplied();
};

void tst_ConfigReload::performanceKeys_data()
{
    QTest::addColumn<int>("key");
    QTest::addColumn<QStringList>("restart");
    const QStringList performance{"performance"};
    const auto row = [&](const char *name, int index, const QStringList &expected) {
        QTest::newRow(name) << index << expected;
    };
    row("max_queue_size", 0, performance);
    row("max_queue_bytes", 1, performance);
    row("overflow_policy", 2, performance);
    row("heartbeat_timeout", 3, performance);
    row("cleanup_interval", 4, performance);
    row("consumer_cleanup_interval", 5, performance);
    row("idle_timeout_sec", 6, performance);
    row("default_prefetch", 7, performance);
    row("ack_timeout_sec", 8, performance);
    row("max_queues_per_cn", 9, performance);
    row("max_exchanges_per_cn", 10, performance);
    row("max_bindings_per_cn", 11, performance);
    row("memory_budget_mb (applied)", 12, QStringList{});
}

void tst_ConfigReload::performanceKeys()
{
    QFETCH(int, key);
    QFETCH(QStringList, restart);
    const Config running;
    Config next;
    Config::Performance &p = next.performance;
    switch (key) {
    case 0: p.maxQueueSize += 1; break;
    case 1: p.maxQueueBytes += 1; break;
    case 2: p.overflowPolicy = QStringLiteral("reject-publish"); break;
    case 3: p.heartbeatTimeout += 1; break;
    case 4: p.cleanupInterval += 1; break;
    case 5: p.consumerCleanupInterval += 1; break;
    case 6: p.idleTimeoutSec += 1; break;
    case 7: p.defaultPrefetch += 1; break;
    case 8: p.ackTimeoutSec += 1; break;
    case 9: p.maxQueuesPerCn += 1; break;
    case 10: p.maxExchangesPerCn += 1; break;
    case 11: p.maxBindingsPerCn += 1; break;
    case 12: p.memoryBudgetMb += 1; break;
    }
    QCOMPARE(cmq::restartRequired(running, next), restart);
}

void tst_ConfigReload::memoryBudgetIsApplied()
{
    Config running;
    Config next;
    next.performance.memoryBudgetMb = 512;
    next.performance.maxQueuesPerCn = 7; // needs a restart: not copied
    cmq::applyReloadable(running, next);
    QCOMPARE(running.performance.memoryBudgetMb, 512);
    QCOMPARE(running.performance.maxQueuesPerCn, Config().performance.maxQueuesPerCn);
}

QTEST_GUILESS_MAIN(tst_ConfigReload)
#include "tst_configreload.moc"
