// TalkerTotals: per-CN totals are closed connections' figures plus the open ones', sorted by
// CN; an identity without connection is kept for the retention after its last close, and at
// most maxIdle of them (the longest idle go first). Times are given, not read from a clock.

#include <QtTest>

#include "metrics/talkertotals.h"

using cmq::metrics::OpenTalker;
using cmq::metrics::TalkerFigures;
using cmq::metrics::TalkerTotals;
using cmq::metrics::TalkerView;

class tst_TalkerTotals : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void view_data();
    void view();
    void retention_data();
    void retention();
};

static TalkerFigures figures(quint64 publishes, quint64 deliveries = 0)
{
    return TalkerFigures{publishes, deliveries, publishes + deliveries, publishes * 100,
                         deliveries * 100};
}

// "cn:connections:publishes:deliveries:idle_seconds" per identity, in order.
static QStringList describe(const QList<TalkerView> &views)
{
    QStringList out;
    for (const TalkerView &v : views)
        out.append(QStringLiteral("%1:%2:%3:%4:%5")
                       .arg(v.cn)
                       .arg(v.connections)
                       .arg(v.figures.publishes)
                       .arg(v.figures.deliveries)
                       .arg(v.idleSeconds));
    return out;
}

void tst_TalkerTotals::view_data()
{
    QTest::addColumn<QStringList>("closed"); // "cn:publishes:deliveries:closed_at_ms"
    QTest::addColumn<QStringList>("open");   // "cn:publishes:deliveries"
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("nothing") << QStringList() << QStringList() << QStringList();
    QTest::newRow("open only, sorted by cn")
        << QStringList() << QStringList{"svc-b:1:0", "svc-a:5:2"}
        << QStringList{"svc-a:1:5:2:0", "svc-b:1:1:0:0"};
    QTest::newRow("connections of one cn add up")
        << QStringList() << QStringList{"svc-a:5:0", "svc-a:3:1"}
        << QStringList{"svc-a:2:8:1:0"};
    QTest::newRow("closed and open add up, not idle while connected")
        << QStringList{"svc-a:10:0:1000"} << QStringList{"svc-a:2:0"}
        << QStringList{"svc-a:1:12:0:0"};
    QTest::newRow("closed only: idle since the last close")
        << QStringList{"svc-a:10:0:1000", "svc-a:1:4:3000"} << QStringList()
        << QStringList{"svc-a:0:11:4:2"};
}

void tst_TalkerTotals::view()
{
    QFETCH(QStringList, closed);
    QFETCH(QStringList, open);
    QFETCH(QStringList, expected);
    TalkerTotals totals;
    for (const QString &c : closed) {
        const QStringList f = c.split(u':');
        totals.connectionClosed(f[0], figures(f[1].toULongLong(), f[2].toULongLong()),
                                f[3].toLongLong());
    }
    QList<OpenTalker> live;
    for (const QString &o : open) {
        const QStringList f = o.split(u':');
        live.append(OpenTalker{f[0], figures(f[1].toULongLong(), f[2].toULongLong())});
    }
    QCOMPARE(describe(totals.view(live, 5000)), expected);
}

void tst_TalkerTotals::retention_data()
{
    QTest::addColumn<QStringList>("closed"); // "cn:closed_at_ms"
    QTest::addColumn<QStringList>("connected");
    QTest::addColumn<qint64>("nowMs");
    QTest::addColumn<QStringList>("kept"); // retention 10000 ms, at most 2 idle
    QTest::newRow("within the retention")
        << QStringList{"a:0", "b:5000"} << QStringList() << qint64(9999)
        << QStringList{"a", "b"};
    QTest::newRow("past the retention")
        << QStringList{"a:0", "b:5000"} << QStringList() << qint64(10000) << QStringList{"b"};
    QTest::newRow("connected again: kept however old")
        << QStringList{"a:0"} << QStringList{"a"} << qint64(60000) << QStringList{"a"};
    QTest::newRow("over the cap: the longest idle go")
        << QStringList{"a:300", "b:100", "c:200", "d:400"} << QStringList() << qint64(1000)
        << QStringList{"a", "d"};
    QTest::newRow("connected ones do not count against the cap")
        << QStringList{"a:300", "b:100", "c:200"} << QStringList{"b"} << qint64(1000)
        << QStringList{"a", "b", "c"};
}

void tst_TalkerTotals::retention()
{
    QFETCH(QStringList, closed);
    QFETCH(QStringList, connected);
    QFETCH(qint64, nowMs);
    QFETCH(QStringList, kept);
    TalkerTotals totals(10000, 2);
    for (const QString &c : closed) {
        const QStringList f = c.split(u':');
        totals.connectionClosed(f[0], figures(1), f[1].toLongLong());
    }
    totals.expire(nowMs, QSet<QString>(connected.cbegin(), connected.cend()));
    QStringList names;
    for (const TalkerView &v : totals.view({}, nowMs))
        names.append(v.cn);
    QCOMPARE(names, kept);
    QCOMPARE(totals.retained(), kept.size());
}

QTEST_GUILESS_MAIN(tst_TalkerTotals)
#include "tst_talkertotals.moc"
