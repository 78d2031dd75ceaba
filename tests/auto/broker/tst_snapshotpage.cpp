// The broker's paged queue list (snapshot::queuePage, docs/ADMIN-PROTOCOL.md "Paging") on a
// router with 50,000 queues: every page, at any offset and in either order, is exactly that
// slice of the fully sorted list (ties in name order); the filter and the counts; the page's
// bindings only. Also prints how long a page takes against the whole list as today's watch
// builds it (the figures in docs/ADMIN-GUI.md); timings are printed, never asserted.

#include <algorithm>
#include <numeric>

#include <time.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "admin/snapshot.h"
#include "routerharness.h"

using namespace cmq;
using namespace cmq::test;

namespace {

constexpr int QueueCount = 50000;

QString queueName(int i)
{
    return QStringLiteral("tenant_%1_queue").arg(i, 5, 10, QLatin1Char('0'));
}

// A max_length that repeats (ties to break) in no particular order.
qint64 lengthOf(int i)
{
    return qint64((i * 7919) % 997) * 10;
}

Config::Performance roomy()
{
    Config::Performance p;
    p.maxQueuesPerCn = QueueCount;
    p.maxBindingsPerCn = QueueCount;
    return p;
}

QStringList namesOf(const QJsonArray &queues)
{
    QStringList names;
    for (const QJsonValue &q : queues)
        names.append(q.toObject().value("name").toString());
    return names;
}

admin::ListPage page(const QString &sort, bool descending, int offset, int limit,
                     const QString &filter = {})
{
    admin::ListPage p;
    p.paged = true;
    p.sort = sort;
    p.descending = descending;
    p.offset = offset;
    p.limit = limit;
    p.filter = filter;
    return p;
}

// CPU time of this thread: the snapshot is built on the broker's event loop thread, and the
// figure does not grow with the machine's load as wall-clock time does.
double threadCpuMs()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

} // namespace

class tst_SnapshotPage : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void pagesAreSlicesOfTheSortedList_data();
    void pagesAreSlicesOfTheSortedList();
    void filterAndCounts();
    void bindingsOfThePage();
    void timing();

private:
    std::unique_ptr<RouterHarness> m_harness;
    QStringList m_byLengthAsc; // every queue by max_length, then name
};

void tst_SnapshotPage::initTestCase()
{
    m_harness = std::make_unique<RouterHarness>(roomy());
    Router &router = *m_harness->router;
    router.declareExchange("ex", "sender_1", [](Verdict s) { QVERIFY(s); });
    for (int i = 0; i < QueueCount; ++i) {
        router.declareQueue(queueName(i), i % 2 ? "receiver_1" : "orders_svc",
                            [](Verdict s) { QVERIFY(s); });
        router.bind(queueName(i), "ex", queueName(i), [](Verdict s) { QVERIFY(s); });
    }
    QCOMPARE(router.queues().size(), QueueCount);
    for (int i = 0; i < QueueCount; ++i)
        router.queues().value(queueName(i))->setPolicy(lengthOf(i), QStringLiteral("drop-head"));
    QList<int> order(QueueCount);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [](int a, int b) {
        return std::pair(lengthOf(a), queueName(a)) < std::pair(lengthOf(b), queueName(b));
    });
    for (int i : order)
        m_byLengthAsc.append(queueName(i));
}

void tst_SnapshotPage::pagesAreSlicesOfTheSortedList_data()
{
    QTest::addColumn<bool>("descending");
    QTest::addColumn<int>("offset");
    QTest::addColumn<int>("limit");
    QTest::newRow("first") << false << 0 << 200;
    QTest::newRow("middle") << false << 24917 << 200;
    QTest::newRow("last, short") << false << QueueCount - 50 << 200;
    QTest::newRow("past the end") << false << QueueCount << 200;
    QTest::newRow("desc first") << true << 0 << 200;
    QTest::newRow("desc deep") << true << 40001 << 1000;
    QTest::newRow("one row") << true << 777 << 1;
}

void tst_SnapshotPage::pagesAreSlicesOfTheSortedList()
{
    QFETCH(bool, descending);
    QFETCH(int, offset);
    QFETCH(int, limit);
    const snapshot::Page got = snapshot::queuePage(
        *m_harness->router, page(QStringLiteral("max_length"), descending, offset, limit));
    // Descending by the key, ties still in name order.
    QStringList expected;
    if (!descending) {
        expected = m_byLengthAsc;
    } else {
        QList<int> order(QueueCount);
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [](int a, int b) {
            return lengthOf(a) != lengthOf(b) ? lengthOf(a) > lengthOf(b)
                                              : queueName(a) < queueName(b);
        });
        for (int i : order)
            expected.append(queueName(i));
    }
    QCOMPARE(namesOf(got.rows), expected.mid(offset, limit));
    QCOMPARE(got.info.value("matched").toInt(), QueueCount);
    QCOMPARE(got.info.value("total").toInt(), QueueCount);
    QCOMPARE(got.info.value("offset").toInt(), offset);
    QCOMPARE(got.info.value("order").toString(), descending ? u"desc" : u"asc");
}

void tst_SnapshotPage::filterAndCounts()
{
    // Owner "orders_svc" holds the even queues; the filter is case-insensitive.
    const snapshot::Page got =
        snapshot::queuePage(*m_harness->router, page({}, true, 0, 3, QStringLiteral("ORDERS")));
    QCOMPARE(got.info.value("matched").toInt(), QueueCount / 2);
    QCOMPARE(got.info.value("sort").toString(), u"name"); // the default
    QCOMPARE(namesOf(got.rows),
             (QStringList{queueName(49998), queueName(49996), queueName(49994)}));
    // On the name: 00012 matches tenant_00012_queue only; 0012 ten queues.
    QCOMPARE(snapshot::queuePage(*m_harness->router, page({}, false, 0, 200, "00012"))
                 .info.value("matched")
                 .toInt(),
             1);
    QCOMPARE(namesOf(snapshot::queuePage(*m_harness->router, page({}, false, 0, 200, "_0012")).rows)
                 .size(),
             10);
}

void tst_SnapshotPage::bindingsOfThePage()
{
    const snapshot::Page got = snapshot::queuePage(*m_harness->router, page("name", false, 10, 2));
    QCOMPARE(got.queueNames, (QSet<QString>{queueName(10), queueName(11)}));
    const QJsonArray bindings = snapshot::bindings(*m_harness->router, &got.queueNames);
    QCOMPARE(bindings.size(), 2);
    QCOMPARE(bindings[0].toObject().value("queue").toString(), queueName(10));
    QCOMPARE(snapshot::bindings(*m_harness->router).size(), QueueCount);
}

void tst_SnapshotPage::timing()
{
    const Router &router = *m_harness->router;
    const auto median = [](QList<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    const auto time = [&](auto &&build) {
        QList<double> ms;
        for (int i = 0; i < 7; ++i) {
            const double start = threadCpuMs();
            build();
            ms.append(threadCpuMs() - start);
        }
        return median(ms);
    };
    qsizetype wholeBytes = 0;
    const double whole = time([&] {
        wholeBytes = QJsonDocument(QJsonObject{{"queues", snapshot::queues(router)},
                                               {"bindings", snapshot::bindings(router)}})
                         .toJson(QJsonDocument::Compact)
                         .size();
    });
    qsizetype pageBytes = 0;
    const auto paged = [&](const admin::ListPage &p) {
        return time([&] {
            const snapshot::Page got = snapshot::queuePage(router, p);
            pageBytes = QJsonDocument(
                            QJsonObject{{"queues", got.rows},
                                        {"queues_page", got.info},
                                        {"bindings", snapshot::bindings(router, &got.queueNames)}})
                            .toJson(QJsonDocument::Compact)
                            .size();
        });
    };
    const double byName = paged(page("name", false, 0, 200));
    const double byNumber = paged(page("ready", true, 0, 200));
    const double deep = paged(page("max_length", false, 49800, 200));
    const double filtered = paged(page("name", false, 0, 200, "orders"));
    // Where a page's time goes: choosing and building the rows, then the page's bindings.
    snapshot::Page rowsOnly;
    const double rows =
        time([&] { rowsOnly = snapshot::queuePage(router, page("ready", true, 0, 200)); });
    const double pageBindings = time([&] { snapshot::bindings(router, &rowsOnly.queueNames); });
    qInfo("%d queues and their bindings, CPU time, median of 7: whole list %.1f ms (%.1f MB of "
          "JSON); "
          "page of 200 (%.0f kB): by name %.1f ms, by ready desc %.1f ms, by max_length at "
          "offset 49,800 %.1f ms, filtered to half by owner %.1f ms; of which (by ready) rows "
          "%.1f ms, the page's bindings %.1f ms",
          QueueCount, whole, wholeBytes / 1e6, pageBytes / 1e3, byName, byNumber, deep, filtered,
          rows, pageBindings);
}

QTEST_GUILESS_MAIN(tst_SnapshotPage)
#include "tst_snapshotpage.moc"
