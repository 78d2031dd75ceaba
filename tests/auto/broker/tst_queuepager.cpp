// The queue pager after a restart whose backlog count was deferred (core/queuepager.h): the
// core on a store that keeps queue entries in memory and runs its jobs in order, like the
// storage worker, with the background count answered when the test says so. Publishes made
// while the count is out queue up behind the backlog; every message comes once, in order; the
// figures are lower bounds until the count lands and exact after; drop-head applies once the
// whole queue is known; a purge makes a late count moot. No database, no sockets.

#include <algorithm>
#include <deque>
#include <map>

#include <QtTest>

#include "core/router.h"
#include "limits/clock.h"
#include "limits/memorybudget.h"
#include "routerfakes.h"

using namespace cmq;
using cmq::test::FakeEndpoint;

namespace {

// queue_entries in memory. Jobs (commits, page reads, purges) wait in `jobs` and run in order
// when the test calls runJobs(), as on the storage worker; acks delete at once.
class TableStore final : public storage::RouterStore
{
public:
    struct Row
    {
        qint64 id;
        QString queue;
        QByteArray messageId;
    };

    void insert(const QString &queue, const QByteArray &messageId)
    {
        rows.push_back(Row{++lastId, queue, messageId});
    }
    qint64 countOf(const QString &queue) const
    {
        return std::count_if(rows.begin(), rows.end(),
                             [&](const Row &r) { return r.queue == queue; });
    }
    storage::QueueEntry entry(const Row &row) const
    {
        storage::QueueEntry e;
        e.entryId = row.id;
        e.queue = row.queue;
        e.messageId = row.messageId;
        e.sender = QStringLiteral("sender_1");
        e.exchange = QStringLiteral("ex");
        e.routingKey = QStringLiteral("rk");
        e.envelope = QByteArray(100, 'x');
        e.sentTime = QDateTime::currentDateTimeUtc();
        return e;
    }
    // The first `limit` entries of `queue`, as openAndRecover() reads a head.
    QList<storage::QueueEntry> head(const QString &queue, int limit) const
    {
        QList<storage::QueueEntry> entries;
        for (const Row &row : rows) {
            if (row.queue == queue && entries.size() < limit)
                entries.append(entry(row));
        }
        return entries;
    }

    void runJobs()
    {
        while (!jobs.empty()) {
            const std::function<void()> job = std::move(jobs.front());
            jobs.pop_front();
            job();
        }
    }
    // The background count lands: what the snapshot taken at start-up held.
    void landCount()
    {
        QVERIFY(countDone);
        QList<storage::QueueBacklog> counted;
        for (const auto &[queue, messages] : snapshot)
            counted.append({queue, messages, 0});
        const auto done = std::move(countDone);
        countDone = nullptr;
        done(counted);
    }

    void publish(QList<storage::MessageRecord> records,
                 std::function<void(QList<storage::PublishResult>)> done) override
    {
        jobs.push_back([this, records, done] {
            for (const storage::MessageRecord &record : records) {
                for (const QString &queue : record.queues)
                    insert(queue, record.messageId);
            }
            done(QList<storage::PublishResult>(records.size(),
                                               {storage::PublishOutcome::Stored, {}}));
        });
    }
    void saveExchange(const storage::ExchangeRecord &, StatusCallback done) override
    {
        done(success());
    }
    void saveQueue(const storage::QueueRecord &, StatusCallback done) override { done(success()); }
    void saveBinding(const storage::BindingRecord &, StatusCallback done) override
    {
        done(success());
    }
    void deleteQueue(const QString &queue, StatusCallback done) override
    {
        purgeQueue(queue, std::move(done));
    }
    void purgeQueue(const QString &queue, StatusCallback done) override
    {
        jobs.push_back([this, queue, done] {
            std::erase_if(rows, [&](const Row &r) { return r.queue == queue; });
            done(success());
        });
    }
    void moveEntries(QList<storage::EntryMove>, StatusCallback done) override { done(success()); }
    void markDelivered(const QString &, const QByteArray &) override {}
    void markAcknowledged(const QString &queue, const QByteArray &id) override
    {
        remove(queue, id);
    }
    void markEvicted(const QString &queue, const QByteArray &id) override
    {
        evicted.append(QString::fromUtf8(id));
        remove(queue, id);
    }
    void loadQueuePage(const QString &queue, qint64 afterEntryId, const QByteArray &fromMessageId,
                       int limit, std::function<void(Result<storage::QueuePage>)> done) override
    {
        ++pageReads;
        jobs.push_back([=, this] {
            qint64 after = afterEntryId;
            if (!fromMessageId.isEmpty()) {
                after = std::numeric_limits<qint64>::max();
                for (const Row &row : rows) {
                    if (row.queue == queue && row.messageId == fromMessageId)
                        after = row.id - 1;
                }
            }
            storage::QueuePage page;
            for (const Row &row : rows) {
                if (row.queue == queue && row.id > after && page.entries.size() < limit)
                    page.entries.append(entry(row));
            }
            done(page);
        });
    }
    void countQueueBacklogs(std::function<void(Result<QList<storage::QueueBacklog>>)> done) override
    {
        QVERIFY(!countDone);
        countDone = std::move(done);
    }

    std::deque<Row> rows;
    qint64 lastId = 0;
    std::deque<std::function<void()>> jobs;
    std::map<QString, qint64> snapshot;
    std::function<void(Result<QList<storage::QueueBacklog>>)> countDone;
    QStringList evicted;
    int pageReads = 0;

private:
    void remove(const QString &queue, const QByteArray &id)
    {
        std::erase_if(rows, [&](const Row &r) { return r.queue == queue && r.messageId == id; });
    }
};

constexpr int Window = 4;

struct Restarted
{
    // `queued` messages m0, m1, ... wait in queue "q" when the broker starts; its head is
    // loaded and the count deferred, as openAndRecover() leaves it with a recovery window.
    explicit Restarted(int queued, qint64 maxLength = 1000)
    {
        performance.queueWindowMessages = Window;
        performance.maxQueueSize = maxLength;
        router = std::make_unique<Router>(store, performance, memory, nullptr, &clock);
        for (int i = 0; i < queued; ++i)
            store.insert(QStringLiteral("q"), "m" + QByteArray::number(i));
        store.snapshot[QStringLiteral("q")] = store.countOf(QStringLiteral("q"));
        storage::RecoveredState state;
        state.exchanges.append(
            {QStringLiteral("ex"), QStringLiteral("direct"), QStringLiteral("sender_1")});
        state.queues.append({QStringLiteral("q"), QStringLiteral("receiver_1"), maxLength,
                             QStringLiteral("drop-head")});
        state.bindings.append({QStringLiteral("q"), QStringLiteral("ex"), QStringLiteral("rk")});
        state.entries = store.head(QStringLiteral("q"), Window);
        if (state.entries.size() >= Window)
            state.uncounted.append(QStringLiteral("q"));
        else
            state.backlogs.append({QStringLiteral("q"), state.entries.size(), 0});
        router->restore(state);
    }

    Queue &queue() { return *router->queues().value(QStringLiteral("q")); }
    void publish(const QByteArray &id)
    {
        router->publish("sender_1", "ex", "rk", {{id, QByteArray(100, 'x')}},
                        [](const PublishOutcomes &o) { QVERIFY(o.value(0).stored()); });
        store.runJobs();
    }
    void consume(FakeEndpoint &endpoint)
    {
        router->setPrefetch(&endpoint, 1);
        QVERIFY(router->consume(&endpoint, QStringLiteral("q")));
        QCoreApplication::processEvents();
    }
    // Acknowledges each delivery and lets the store answer what that asked for, until `count`
    // deliveries in all were acknowledged or nothing more comes.
    void drain(FakeEndpoint &endpoint, qsizetype count)
    {
        while (acked < count) {
            const QStringList ids = endpoint.deliveredIds();
            if (ids.size() > acked) {
                QVERIFY(router->ack(&endpoint, ids.at(acked).toUtf8()));
                ++acked;
            }
            store.runJobs();
            QCoreApplication::processEvents();
            if (endpoint.deliveredIds().size() == acked && store.jobs.empty())
                break; // nothing in flight and nothing delivered: the caller's check shows it
        }
    }

    Config::Performance performance;
    qsizetype acked = 0;
    TableStore store;
    limits::MemoryBudget memory{0};
    limits::ManualClock clock;
    std::unique_ptr<Router> router;
};

QStringList ids(const QString &prefix, int from, int to)
{
    QStringList list;
    for (int i = from; i < to; ++i)
        list.append(prefix + QString::number(i));
    return list;
}

} // namespace

class tst_QueuePager : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void publishDuringCountQueuesBehindTheBacklog_data();
    void publishDuringCountQueuesBehindTheBacklog();
    void dropHeadAppliesOnceCounted();
    void drainedWindowWaitsForTheCount();
    void purgeMakesTheCountMoot();
    void headThatHoldsEverythingIsExact();
};

void tst_QueuePager::publishDuringCountQueuesBehindTheBacklog_data()
{
    QTest::addColumn<int>("landAfter"); // deliveries acknowledged before the count lands
    QTest::newRow("count before any page") << 0;
    QTest::newRow("count after two pages") << 5;
    QTest::newRow("count after the backlog drained") << 12;
}

void tst_QueuePager::publishDuringCountQueuesBehindTheBacklog()
{
    QFETCH(int, landAfter);
    Restarted broker(10);
    Queue &queue = broker.queue();
    QVERIFY(!queue.figuresExact());
    QCOMPARE(queue.depth(), Window); // at least what the head shows
    QCOMPARE(queue.windowCount(), Window);

    FakeEndpoint receiver(1);
    broker.consume(receiver); // m0 in hand: the window has room
    QCOMPARE(queue.windowCount(), Window - 1);
    // Committed while the count is out: it must not join the window ahead of m4..m9.
    broker.publish("p0");
    QCOMPARE(queue.windowCount(), Window - 1);
    QCOMPARE(queue.depth(), Window);

    broker.drain(receiver, landAfter);
    QCOMPARE(receiver.deliveredIds().size(), qsizetype(qMin(landAfter + 1, 11)));
    broker.store.landCount();
    QVERIFY(queue.figuresExact());
    // Exact now: everything not acknowledged yet, the delivery in hand included.
    QCOMPARE(queue.depth(), qsizetype(qMax(0, 11 - landAfter)));
    QCOMPARE(queue.depth(), qsizetype(broker.store.countOf(QStringLiteral("q"))));

    broker.publish("p1"); // behind the backlog once counted too
    broker.drain(receiver, 12);
    QCOMPARE(receiver.deliveredIds(), ids("m", 0, 10) + QStringList({"p0", "p1"}));
    QCOMPARE(queue.depth(), 0);
    QCOMPARE(queue.bytes(), 0);
    QCOMPARE(broker.store.countOf(QStringLiteral("q")), 0);
}

void tst_QueuePager::dropHeadAppliesOnceCounted()
{
    // Ten waiting in a queue of six: unknown at start, so nothing is evicted until the count
    // says how many there are; then the oldest four go, the head held in memory.
    Restarted broker(10, 6);
    Queue &queue = broker.queue();
    QVERIFY(broker.store.evicted.isEmpty());
    broker.store.landCount();
    QCOMPARE(broker.store.evicted, ids("m", 0, 4));
    QCOMPARE(queue.depth(), 6);
    FakeEndpoint receiver(1);
    broker.consume(receiver);
    broker.store.runJobs();
    QCoreApplication::processEvents();
    broker.drain(receiver, 6);
    QCOMPARE(receiver.deliveredIds(), ids("m", 4, 10));
}

void tst_QueuePager::drainedWindowWaitsForTheCount()
{
    // The head is all there is, but the window was full, so the count was deferred: an empty
    // page leaves the queue waiting (no page loop), a publish is paged in behind it.
    Restarted broker(Window);
    Queue &queue = broker.queue();
    FakeEndpoint receiver(1);
    broker.consume(receiver);
    broker.drain(receiver, Window);
    QCOMPARE(receiver.deliveredIds(), ids("m", 0, Window));
    const int reads = broker.store.pageReads;
    QVERIFY(!queue.figuresExact());
    QCOMPARE(queue.depth(), 0);
    QVERIFY(broker.store.jobs.empty());
    broker.publish("p0");
    QVERIFY(broker.store.pageReads > reads); // it is in the database only: paged in
    broker.drain(receiver, Window + 1);
    QCOMPARE(receiver.deliveredIds(), ids("m", 0, Window) + QStringList({"p0"}));
    broker.store.landCount();
    QVERIFY(queue.figuresExact());
    QCOMPARE(queue.depth(), 0);
    // Known to be empty: the next publish joins the window without a page read.
    const int known = broker.store.pageReads;
    broker.publish("p1");
    QCOMPARE(receiver.deliveredIds().constLast(), QStringLiteral("p1"));
    QCOMPARE(broker.store.pageReads, known);
}

void tst_QueuePager::purgeMakesTheCountMoot()
{
    Restarted broker(10);
    Queue &queue = broker.queue();
    std::optional<qint64> purged;
    broker.router->purgeQueue(QStringLiteral("q"), [&](Outcome<qint64> r) {
        QVERIFY(r);
        purged = r.value();
    });
    broker.store.runJobs();
    QVERIFY(purged);
    QVERIFY(queue.figuresExact());
    QCOMPARE(queue.depth(), 0);
    broker.store.landCount(); // of the snapshot before the purge: nothing to add any more
    QCOMPARE(queue.depth(), 0);
    broker.publish("p0");
    FakeEndpoint receiver(1);
    broker.consume(receiver);
    broker.drain(receiver, 1);
    QCOMPARE(receiver.deliveredIds(), QStringList({"p0"}));
}

void tst_QueuePager::headThatHoldsEverythingIsExact()
{
    Restarted broker(Window - 1);
    QVERIFY(!broker.store.countDone); // nothing to count
    QVERIFY(broker.queue().figuresExact());
    QCOMPARE(broker.queue().depth(), Window - 1);
}

QTEST_GUILESS_MAIN(tst_QueuePager)
#include "tst_queuepager.moc"
