// The broker's paged rate-limit buckets (snapshot::bucketPage, docs/ADMIN-PROTOCOL.md "Paging")
// on 10,000 synthetic client views: every page is that slice of the fully sorted list (ties by
// scope, then key), the default order is the whole list's (CNs, then IPs, by key), fractions
// of tokens order, the filter and the counts. Also prints what a page costs against the whole
// list (CPU time; printed, never asserted).

#include <algorithm>

#include <time.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "admin/snapshot.h"
#include "limits/ratelimiter.h"

using namespace cmq;

namespace {

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
    return (v.scope == limits::Scope::Cn ? u"cn:" : u"ip:") + v.key;
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

class tst_BucketPage : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void slices_data();
    void slices();
    void defaultOrderIsTheWholeList();
    void filterAndCounts();
    void rowsAreWholeBuckets();
    void timing();
};

void tst_BucketPage::slices_data()
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

void tst_BucketPage::slices()
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

void tst_BucketPage::defaultOrderIsTheWholeList()
{
    const snapshot::Page got = snapshot::bucketPage(views(), page({}, false, 5990, 20));
    QCOMPARE(got.info.value("sort").toString(), u"scope");
    QStringList expected = sortedBy([](const limits::ClientView &) { return 0; }, false);
    QCOMPARE(keysOf(got.rows), expected.mid(5990, 20));
    QCOMPARE(keysOf(got.rows).first(), u"cn:" + cnKey(5990));
    QVERIFY(keysOf(got.rows).last().startsWith(u"ip:"));
}

void tst_BucketPage::filterAndCounts()
{
    // Case-insensitive substring of the key: CLIENT_0001 is client_00010 to client_00019.
    const snapshot::Page got =
        snapshot::bucketPage(views(), page("key", true, 0, 3, QStringLiteral("CLIENT_0001")));
    QCOMPARE(got.info.value("matched").toInt(), 10);
    QCOMPARE(got.info.value("total").toInt(), CnCount + IpCount);
    QCOMPARE(got.info.value("filter").toString(), u"CLIENT_0001");
    QCOMPARE(keysOf(got.rows),
             (QStringList{u"cn:" + cnKey(19), u"cn:" + cnKey(18), u"cn:" + cnKey(17)}));
    // IP keys match too; nothing matching is an empty page with its counts.
    QCOMPARE(snapshot::bucketPage(views(), page({}, false, 0, 200, "10.0.30."))
                 .info.value("matched")
                 .toInt(),
             250);
    const snapshot::Page none = snapshot::bucketPage(views(), page({}, false, 0, 200, "nobody"));
    QCOMPARE(none.rows.size(), 0);
    QCOMPARE(none.info.value("matched").toInt(), 0);
}

void tst_BucketPage::rowsAreWholeBuckets()
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

void tst_BucketPage::timing()
{
    const QList<limits::ClientView> all = views();
    const auto cpuMs = [] {
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
    };
    const auto time = [&](auto &&build) {
        QList<double> ms;
        for (int i = 0; i < 7; ++i) {
            const double start = cpuMs();
            build();
            ms.append(cpuMs() - start);
        }
        std::sort(ms.begin(), ms.end());
        return ms[3];
    };
    qsizetype wholeBytes = 0, pageBytes = 0;
    const double whole = time([&] {
        QJsonArray buckets;
        for (const limits::ClientView &v : all)
            buckets.append(snapshot::bucket(v));
        wholeBytes = QJsonDocument(buckets).toJson(QJsonDocument::Compact).size();
    });
    const double paged = time([&] {
        const snapshot::Page got = snapshot::bucketPage(all, page("rejected", true, 0, 200));
        pageBytes = QJsonDocument(got.rows).toJson(QJsonDocument::Compact).size();
    });
    qInfo("%d buckets, CPU time, median of 7: whole list %.1f ms (%.2f MB of JSON); page of 200 "
          "by rejected, descending %.1f ms (%.0f kB)",
          int(all.size()), whole, wholeBytes / 1e6, paged, pageBytes / 1e3);
}

QTEST_GUILESS_MAIN(tst_BucketPage)
#include "tst_bucketpage.moc"
