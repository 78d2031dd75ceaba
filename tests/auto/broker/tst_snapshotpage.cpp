// The broker's paged queue list (snapshot::queuePage, docs/ADMIN-PROTOCOL.md "Paging") on a
// router with 50,000 queues: every page, at any offset and in either order, is exactly that
// slice of the fully sorted list (ties in name order); the filter and the counts; the page's
// bindings only. Also prints how long a page takes against the whole list as today's watch
// builds it (the figures in docs/ADMIN-GUI.md); timings are printed, never asserted. And the
// paged rate-limit buckets (snapshot::bucketPage) on 10,000 synthetic client views: slices of
// the sorted list (ties by scope, then key), the default order the whole list's (CNs, then IPs,
// by key), fractions of tokens ordered, the filter and the counts, and their cost.

#include <algorithm>
#include <numeric>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "admin/snapshot.h"
#include "limits/ratelimiter.h"
#include "pagetesting.h"
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

// Rate-limit buckets: one per client CN and per source IP.
constexpr int CnCount = 6000;
constexpr int IpCount = 4000;

QString cnKey(int i)
{
    return QStringLiteral("client_%1").arg(i, 5, 10, QLatin1Char('0'));
}

QList<limits::ClientView> views()
{
    QList<limits::ClientView> all;
    for (int i = 0; i < CnCount + IpCount; ++i) {
        limits::ClientView v;
        v.scope = i < CnCount ? limits::Scope::Cn : limits::Scope::Ip;
        v.key = i < CnCount ? cnKey(i) : QStringLiteral("10.0.%1.%2").arg(i / 250).arg(i % 250);
        v.connections = i % 7;
        v.connectionLimit = 20;
        v.global.tokens = 100 - (i % 13) * 0.25; // fractions, repeated: ties to break
        v.global.rejected = quint64((i * 7919) % 997);
        v.publish.rejected = quint64(i % 5);
        v.publish.accepted = quint64(i);
        all.append(v);
    }
    // clients() hands them sorted by scope and key; the page must not rely on it.
    std::reverse(all.begin(), all.end());
    return all;
}

QStringList keysOf(const QJsonArray &buckets)
{
    QStringList keys;
    for (const QJsonValue &b : buckets)
        keys.append(b.toObject().value("scope").toString() + u':' +
                    b.toObject().value("key").toString());
    return keys;
}

QString keyOf(const limits::ClientView &v)
{
    return (v.scope == limits::Scope::Cn ? QStringLiteral("cn:") : QStringLiteral("ip:")) + v.key;
}

// The whole list ordered by `value`, ties by scope and key: what every page is a slice of.
template <typename Value> QStringList sortedBy(Value value, bool descending)
{
    QList<limits::ClientView> all = views();
    std::sort(all.begin(), all.end(),
              [&](const limits::ClientView &a, const limits::ClientView &b) {
                  const auto va = value(a), vb = value(b);
                  if (va != vb)
                      return descending ? va > vb : va < vb;
                  return std::pair(int(a.scope), a.key) < std::pair(int(b.scope), b.key);
              });
    QStringList keys;
    for (const limits::ClientView &v : all)
        keys.append(keyOf(v));
    return keys;
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
    void bucketSlices_data();
    void bucketSlices();
    void bucketDefaultOrder();
    void bucketFilterAndCounts();
    void bucketRowsAreWholeBuckets();
    void bucketTiming();

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
    qsizetype wholeBytes = 0;
    const double whole = medianCpuMs([&] {
        wholeBytes = QJsonDocument(QJsonObject{{"queues", snapshot::queues(router)},
                                               {"bindings", snapshot::bindings(router)}})
                         .toJson(QJsonDocument::Compact)
                         .size();
    });
    qsizetype pageBytes = 0;
    const auto paged = [&](const admin::ListPage &p) {
        return medianCpuMs([&] {
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
        medianCpuMs([&] { rowsOnly = snapshot::queuePage(router, page("ready", true, 0, 200)); });
    const double pageBindings =
        medianCpuMs([&] { snapshot::bindings(router, &rowsOnly.queueNames); });
    qInfo("%d queues and their bindings, CPU time, median of 7: whole list %.1f ms (%.1f MB of "
          "JSON); "
          "page of 200 (%.0f kB): by name %.1f ms, by ready desc %.1f ms, by max_length at "
          "offset 49,800 %.1f ms, filtered to half by owner %.1f ms; of which (by ready) rows "
          "%.1f ms, the page's bindings %.1f ms",
          QueueCount, whole, wholeBytes / 1e6, pageBytes / 1e3, byName, byNumber, deep, filtered,
          rows, pageBindings);
}

void tst_SnapshotPage::bucketSlices_data()
{
    QTest::addColumn<QString>("sort");
    QTest::addColumn<bool>("descending");
    QTest::addColumn<int>("offset");
    QTest::addColumn<int>("limit");
    QTest::newRow("rejected desc, first") << "global_rejected" << true << 0 << 200;
    QTest::newRow("rejected, middle") << "global_rejected" << false << 4917 << 200;
    QTest::newRow("tokens (fractions)") << "global_tokens" << false << 0 << 300;
    QTest::newRow("tokens desc, deep") << "global_tokens" << true << 9000 << 1000;
    QTest::newRow("publish accepted, last short") << "publish_accepted" << true << 9950 << 200;
    QTest::newRow("connections, past the end") << "connections" << false << 10000 << 200;
    QTest::newRow("key desc") << "key" << true << 100 << 50;
    QTest::newRow("rejected, both buckets") << "rejected" << true << 0 << 500;
}

void tst_SnapshotPage::bucketSlices()
{
    QFETCH(QString, sort);
    QFETCH(bool, descending);
    QFETCH(int, offset);
    QFETCH(int, limit);
    QStringList expected;
    if (sort == u"global_rejected")
        expected =
            sortedBy([](const limits::ClientView &v) { return v.global.rejected; }, descending);
    else if (sort == u"global_tokens")
        expected =
            sortedBy([](const limits::ClientView &v) { return v.global.tokens; }, descending);
    else if (sort == u"publish_accepted")
        expected =
            sortedBy([](const limits::ClientView &v) { return v.publish.accepted; }, descending);
    else if (sort == u"rejected")
        expected = sortedBy(
            [](const limits::ClientView &v) { return v.global.rejected + v.publish.rejected; },
            descending);
    else if (sort == u"connections")
        expected = sortedBy([](const limits::ClientView &v) { return v.connections; }, descending);
    else
        expected = sortedBy([](const limits::ClientView &v) { return v.key; }, descending);
    const snapshot::Page got = snapshot::bucketPage(views(), page(sort, descending, offset, limit));
    QCOMPARE(keysOf(got.rows), expected.mid(offset, limit));
    QCOMPARE(got.info.value("matched").toInt(), CnCount + IpCount);
    QCOMPARE(got.info.value("total").toInt(), CnCount + IpCount);
    QCOMPARE(got.info.value("offset").toInt(), offset);
    QCOMPARE(got.info.value("limit").toInt(), limit);
    QCOMPARE(got.info.value("sort").toString(), sort);
    QCOMPARE(got.info.value("order").toString(), descending ? u"desc" : u"asc");
}

void tst_SnapshotPage::bucketDefaultOrder()
{
    const snapshot::Page got = snapshot::bucketPage(views(), page({}, false, 5990, 20));
    QCOMPARE(got.info.value("sort").toString(), u"scope");
    QStringList expected = sortedBy([](const limits::ClientView &) { return 0; }, false);
    QCOMPARE(keysOf(got.rows), expected.mid(5990, 20));
    QCOMPARE(keysOf(got.rows).first(), QStringLiteral("cn:") + cnKey(5990));
    QVERIFY(keysOf(got.rows).last().startsWith(u"ip:"));
}

void tst_SnapshotPage::bucketFilterAndCounts()
{
    // Case-insensitive substring of the key: CLIENT_0001 is client_00010 to client_00019.
    const snapshot::Page got =
        snapshot::bucketPage(views(), page("key", true, 0, 3, QStringLiteral("CLIENT_0001")));
    QCOMPARE(got.info.value("matched").toInt(), 10);
    QCOMPARE(got.info.value("total").toInt(), CnCount + IpCount);
    QCOMPARE(got.info.value("filter").toString(), u"CLIENT_0001");
    QCOMPARE(keysOf(got.rows),
             (QStringList{QStringLiteral("cn:") + cnKey(19), QStringLiteral("cn:") + cnKey(18),
                          QStringLiteral("cn:") + cnKey(17)}));
    // IP keys match too; nothing matching is an empty page with its counts.
    QCOMPARE(snapshot::bucketPage(views(), page({}, false, 0, 200, "10.0.30."))
                 .info.value("matched")
                 .toInt(),
             250);
    const snapshot::Page none = snapshot::bucketPage(views(), page({}, false, 0, 200, "nobody"));
    QCOMPARE(none.rows.size(), 0);
    QCOMPARE(none.info.value("matched").toInt(), 0);
}

void tst_SnapshotPage::bucketRowsAreWholeBuckets()
{
    // A page's rows are the same objects the whole list holds.
    const QList<limits::ClientView> all = views();
    const snapshot::Page got = snapshot::bucketPage(all, page("key", false, 0, 1));
    QCOMPARE(got.rows.size(), 1);
    const auto first = std::min_element(all.begin(), all.end(),
                                        [](const auto &a, const auto &b) { return a.key < b.key; });
    QCOMPARE(got.rows[0].toObject(), snapshot::bucket(*first));
    QCOMPARE(got.rows[0].toObject().keys(),
             (QStringList{"connection_limit", "connections", "global", "idle_seconds", "key",
                          "publish", "scope"}));
}

void tst_SnapshotPage::bucketTiming()
{
    const QList<limits::ClientView> all = views();
    printPageCost(
        QStringLiteral("%1 buckets").arg(all.size()),
        QStringLiteral("page of 200 by rejected, descending"),
        [&] {
            QJsonArray buckets;
            for (const limits::ClientView &v : all)
                buckets.append(snapshot::bucket(v));
            return buckets;
        },
        [&] { return snapshot::bucketPage(all, page("rejected", true, 0, 200)).rows; });
}

QTEST_GUILESS_MAIN(tst_SnapshotPage)
#include "tst_snapshotpage.moc"
