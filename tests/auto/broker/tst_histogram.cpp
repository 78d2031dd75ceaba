// Histograms as the exposition format wants them: inclusive upper bounds, cumulative counts,
// exact sums and counts, bulk observations.

#include <QTest>

#include "metrics/histogram.h"

using cmq::metrics::Histogram;

class tst_Histogram : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void buckets_data();
    void buckets();
    void observeMany();
    void exponentialBounds();
};

void tst_Histogram::buckets_data()
{
    QTest::addColumn<QList<double>>("observations");
    QTest::addColumn<QList<quint64>>("cumulative"); // for bounds 1, 2, 4
    QTest::addColumn<quint64>("count");
    QTest::addColumn<double>("sum");
    QTest::newRow("empty") << QList<double>{} << QList<quint64>{0, 0, 0} << quint64(0) << 0.0;
    QTest::newRow("bounds are inclusive")
        << QList<double>{1, 2, 4} << QList<quint64>{1, 2, 3} << quint64(3) << 7.0;
    QTest::newRow("above the last bound")
        << QList<double>{0.5, 100} << QList<quint64>{1, 1, 1} << quint64(2) << 100.5;
    QTest::newRow("between bounds")
        << QList<double>{1.5, 1.9, 3} << QList<quint64>{0, 2, 3} << quint64(3) << 6.4;
}

void tst_Histogram::buckets()
{
    QFETCH(QList<double>, observations);
    QFETCH(QList<quint64>, cumulative);
    QFETCH(quint64, count);
    QFETCH(double, sum);
    Histogram h({1, 2, 4});
    for (double v : observations)
        h.observe(v);
    QCOMPARE(h.cumulativeCounts(), cumulative);
    QCOMPARE(h.count(), count);
    QCOMPARE(h.sum(), sum);
}

void tst_Histogram::observeMany()
{
    Histogram h({10, 100});
    h.observeMany(50, 4);
    h.observeMany(7, 0);
    QCOMPARE(h.cumulativeCounts(), (QList<quint64>{0, 4}));
    QCOMPARE(h.count(), quint64(4));
    QCOMPARE(h.sum(), 200.0);
}

void tst_Histogram::exponentialBounds()
{
    QCOMPARE(Histogram::exponentialBounds(1, 2, 5), (QList<double>{1, 2, 4, 8, 16}));
}

QTEST_APPLESS_MAIN(tst_Histogram)
#include "tst_histogram.moc"
