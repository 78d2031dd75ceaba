// The broker's paged talker list (snapshot::talkerPage, docs/ADMIN-PROTOCOL.md "Paging") on
// 5,000 synthetic identities: every page is that slice of the list sorted by the key (ties by
// CN), for totals and recent rates; a new flooder with small totals heads the page by publish
// rate and is nowhere near the first page by totals; the default order is the whole list's
// (by CN); the filter and the counts; the page's objects are the whole list's plus the four
// rates, and the whole list's objects have no rates (byte for byte as before paging). Also
// prints what a page costs against the whole list; timings are printed, never asserted.

#include <algorithm>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "admin/snapshot.h"
#include "metrics/talkertotals.h"
#include "pagetesting.h"

using namespace cmq;
using namespace cmq::test;
using metrics::TalkerView;

namespace {

constexpr int TalkerCount = 5000;
const QString Flooder = QStringLiteral("new-flooder");

QString cnOf(int i)
{
    return QStringLiteral("svc-%1").arg(i, 4, 10, QLatin1Char('0'));
}

// Long-lived identities with large totals and modest rates (repeated: ties to break), and
// one that connected a few seconds ago and publishes faster than any of them.
QList<TalkerView> views()
{
    QList<TalkerView> all;
    for (int i = 0; i < TalkerCount; ++i) {
        TalkerView v;
        v.cn = cnOf(i);
        v.connections = i % 3;
        v.figures.publishes = 1000000 + quint64((i * 7919) % 4999) * 1000;
        v.figures.deliveries = quint64(i) * 10;
        v.figures.bytesIn = v.figures.publishes * 200;
        v.idleSeconds = v.connections ? 0 : (i % 300) + 0.5;
        v.rates.publishes = (i % 97) * 0.25; // fractions, repeated
        v.rates.deliveries = i % 11;
        v.rates.bytesIn = v.rates.publishes * 200;
        all.append(v);
    }
    TalkerView flooder;
    flooder.cn = Flooder;
    flooder.connections = 1;
    flooder.figures.publishes = 9000;
    flooder.rates.publishes = 3000;
    all.append(flooder);
    // BrokerMetrics hands them sorted by CN; the page must not rely on it.
    std::reverse(all.begin(), all.end());
    return all;
}

QStringList cnsOf(const QJsonArray &talkers)
{
    QStringList cns;
    for (const QJsonValue &t : talkers)
        cns.append(t.toObject().value("cn").toString());
    return cns;
}

// The whole list ordered by `value`, ties by CN: what every page is a slice of.
template <typename Value> QStringList sortedBy(Value value, bool descending)
{
    QList<TalkerView> all = views();
    std::sort(all.begin(), all.end(), [&](const TalkerView &a, const TalkerView &b) {
        const auto va = value(a), vb = value(b);
        if (va != vb)
            return descending ? va > vb : va < vb;
        return a.cn < b.cn;
    });
    QStringList cns;
    for (const TalkerView &v : all)
        cns.append(v.cn);
    return cns;
}

} // namespace

class tst_TalkerPage : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void slices_data();
    void slices();
    void newFlooderHeadsThePageByRate();
    void defaultOrder();
    void filterAndCounts();
    void rowsAreTheWholeListsPlusRates();
    void timing();
};

void tst_TalkerPage::slices_data()
{
    QTest::addColumn<QString>("sort");
    QTest::addColumn<bool>("descending");
    QTest::addColumn<int>("offset");
    QTest::addColumn<int>("limit");
    QTest::newRow("publish rate, the console's page") << "publish_rate" << true << 0 << 200;
    QTest::newRow("publish rate, deep") << "publish_rate" << true << 2999 << 200;
    QTest::newRow("deliver rate, ascending") << "deliver_rate" << false << 400 << 200;
    QTest::newRow("bytes in rate") << "bytes_in_rate" << true << 0 << 50;
    QTest::newRow("publishes") << "publishes" << true << 0 << 200;
    QTest::newRow("idle seconds") << "idle_seconds" << true << 100 << 100;
    QTest::newRow("connections, last, short") << "connections" << false << TalkerCount - 20 << 200;
    QTest::newRow("cn, descending") << "cn" << true << 10 << 10;
    QTest::newRow("past the end") << "publish_rate" << true << TalkerCount + 1 << 200;
}

void tst_TalkerPage::slices()
{
    QFETCH(QString, sort);
    QFETCH(bool, descending);
    QFETCH(int, offset);
    QFETCH(int, limit);
    QStringList expected;
    if (sort == u"publish_rate")
        expected = sortedBy([](const TalkerView &v) { return v.rates.publishes; }, descending);
    else if (sort == u"deliver_rate")
        expected = sortedBy([](const TalkerView &v) { return v.rates.deliveries; }, descending);
    else if (sort == u"bytes_in_rate")
        expected = sortedBy([](const TalkerView &v) { return v.rates.bytesIn; }, descending);
    else if (sort == u"publishes")
        expected = sortedBy([](const TalkerView &v) { return v.figures.publishes; }, descending);
    else if (sort == u"idle_seconds")
        expected = sortedBy([](const TalkerView &v) { return v.idleSeconds; }, descending);
    else if (sort == u"connections")
        expected = sortedBy([](const TalkerView &v) { return v.connections; }, descending);
    else
        expected = sortedBy([](const TalkerView &v) { return v.cn; }, descending);
    const snapshot::Page got = snapshot::talkerPage(views(), page(sort, descending, offset, limit));
    QCOMPARE(cnsOf(got.rows), expected.mid(offset, limit));
    QCOMPARE(got.info.value("matched").toInt(), TalkerCount + 1);
    QCOMPARE(got.info.value("total").toInt(), TalkerCount + 1);
    QCOMPARE(got.info.value("offset").toInt(), offset);
    QCOMPARE(got.info.value("limit").toInt(), limit);
    QCOMPARE(got.info.value("sort").toString(), sort);
    QCOMPARE(got.info.value("order").toString(), descending ? u"desc" : u"asc");
}

void tst_TalkerPage::newFlooderHeadsThePageByRate()
{
    const snapshot::Page byRate = snapshot::talkerPage(views(), page("publish_rate", true, 0, 200));
    QCOMPARE(cnsOf(byRate.rows).first(), Flooder);
    QCOMPARE(byRate.rows.first().toObject().value("publish_rate").toDouble(), 3000.0);
    // Ordered by totals, it is the last of 5,001.
    const QStringList byTotals =
        cnsOf(snapshot::talkerPage(views(), page("publishes", true, 0, 10000)).rows);
    QCOMPARE(byTotals.indexOf(Flooder), TalkerCount);
}

void tst_TalkerPage::defaultOrder()
{
    const snapshot::Page got = snapshot::talkerPage(views(), page({}, false, 4990, 20));
    QCOMPARE(got.info.value("sort").toString(), u"cn");
    QCOMPARE(got.info.value("order").toString(), u"asc");
    QStringList expected = sortedBy([](const TalkerView &v) { return v.cn; }, false);
    QCOMPARE(cnsOf(got.rows), expected.mid(4990, 20));
    QCOMPARE(got.rows.size(), 11); // the last page is short
    QCOMPARE(cnsOf(got.rows).last(), cnOf(TalkerCount - 1));
    QCOMPARE(cnsOf(snapshot::talkerPage(views(), page({}, false, 0, 1)).rows),
             QStringList{Flooder});
}

void tst_TalkerPage::filterAndCounts()
{
    // Case-insensitive substring of the CN: SVC-001 is svc-0010 to svc-0019.
    const snapshot::Page got =
        snapshot::talkerPage(views(), page("cn", true, 0, 3, QStringLiteral("SVC-001")));
    QCOMPARE(got.info.value("matched").toInt(), 10);
    QCOMPARE(got.info.value("total").toInt(), TalkerCount + 1);
    QCOMPARE(got.info.value("filter").toString(), u"SVC-001");
    QCOMPARE(cnsOf(got.rows), (QStringList{cnOf(19), cnOf(18), cnOf(17)}));
    const snapshot::Page none = snapshot::talkerPage(views(), page({}, false, 0, 200, "nobody"));
    QCOMPARE(none.rows.size(), 0);
    QCOMPARE(none.info.value("matched").toInt(), 0);
}

void tst_TalkerPage::rowsAreTheWholeListsPlusRates()
{
    const QList<TalkerView> all = views();
    const snapshot::Page got = snapshot::talkerPage(all, page("cn", false, 1, 1));
    QCOMPARE(got.rows.size(), 1);
    const TalkerView &v =
        *std::find_if(all.begin(), all.end(), [](const TalkerView &t) { return t.cn == cnOf(0); });
    QJsonObject row = got.rows[0].toObject();
    QCOMPARE(row.value("publish_rate").toDouble(), v.rates.publishes);
    QCOMPARE(row.value("deliver_rate").toDouble(), v.rates.deliveries);
    QCOMPARE(row.value("bytes_in_rate").toDouble(), v.rates.bytesIn);
    QCOMPARE(row.value("bytes_out_rate").toDouble(), 0.0);
    for (const char *rate : {"publish_rate", "deliver_rate", "bytes_in_rate", "bytes_out_rate"})
        row.remove(QLatin1String(rate));
    QCOMPARE(row, snapshot::talker(v));
    // The whole list's object: the fields and their order as before paging existed.
    QCOMPARE(QJsonDocument(snapshot::talker(v)).toJson(QJsonDocument::Compact),
             QByteArray(R"({"bytes_in":200000000,"bytes_out":0,"cn":"svc-0000",)"
                        R"("connections":0,"deliveries":0,"idle_seconds":0.5,)"
                        R"("publishes":1000000,"requests":0})"));
}

void tst_TalkerPage::timing()
{
    const QList<TalkerView> all = views();
    printPageCost(
        QStringLiteral("%1 talkers").arg(all.size()),
        QStringLiteral("page of 200 by publish rate, descending"),
        [&] {
            QJsonArray talkers;
            for (const TalkerView &v : all)
                talkers.append(snapshot::talker(v));
            return talkers;
        },
        [&] { return snapshot::talkerPage(all, page("publish_rate", true, 0, 200)).rows; });
}

QTEST_GUILESS_MAIN(tst_TalkerPage)
#include "tst_talkerpage.moc"
