// TalkerRateWindow: the broker's per-CN recent rates, from totals sampled about once a second.
// A steady rate is that rate; a new identity shows its rate one sample after it appears; a
// burst after a quiet stretch is averaged over the 10 s window, not over the quiet stretch (or
// just the last second); the rate falls to 0 a window after the traffic stops; totals that go
// down start afresh; an identity left out of a sample is forgotten; and the samples kept per
// identity stay bounded (two for a quiet one). Times are given, not read from a clock. Also
// prints what one sample of 5,000 identities costs (the broker takes one a second); printed,
// never asserted.

#include <QtTest>

#include "metrics/talkerratewindow.h"
#include "pagetesting.h"

using cmq::metrics::TalkerFigures;
using cmq::metrics::TalkerRates;
using cmq::metrics::TalkerRateWindow;
using cmq::metrics::TalkerView;

namespace {

TalkerView talker(const QString &cn, quint64 publishes, quint64 deliveries = 0)
{
    TalkerView v;
    v.cn = cn;
    v.figures = TalkerFigures{publishes, deliveries, publishes, publishes * 10, deliveries * 20};
    return v;
}

} // namespace

class tst_TalkerRateWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void steadyRate();
    void newIdentityAfterOneSample();
    void burstAfterQuietIsOverTheWindow();
    void fallsToZeroAWindowAfterTrafficStops();
    void totalsThatGoDownStartAfresh();
    void forgottenIdentities();
    void samplesStayBounded();
    void samplingCost();
};

void tst_TalkerRateWindow::steadyRate()
{
    TalkerRateWindow w;
    // 50 publishes and 20 deliveries a second, sampled at uneven intervals (a busy event loop).
    qint64 ms = 0;
    for (int i = 0; i <= 30; ++i) {
        ms += i % 3 == 0 ? 1300 : 900;
        w.sample({talker("a", quint64(ms / 20), quint64(ms / 50))}, ms);
    }
    const TalkerRates r = w.rates("a");
    QVERIFY2(qAbs(r.publishes - 50) < 0.2, qPrintable(QString::number(r.publishes)));
    QVERIFY2(qAbs(r.deliveries - 20) < 0.2, qPrintable(QString::number(r.deliveries)));
    QVERIFY(qAbs(r.bytesIn - 500) < 2);  // 10 bytes a publish
    QVERIFY(qAbs(r.bytesOut - 400) < 3); // 20 bytes a delivery
}

void tst_TalkerRateWindow::newIdentityAfterOneSample()
{
    TalkerRateWindow w;
    w.sample({talker("old", 1000000)}, 0);
    w.sample({talker("old", 1000000), talker("new", 0)}, 1000);
    QCOMPARE(w.rates("new"), TalkerRates());
    // One second later a flooder's rate is there in full, whatever its small total.
    w.sample({talker("old", 1000000), talker("new", 5000)}, 2000);
    QCOMPARE(w.rates("new").publishes, 5000.0);
    QCOMPARE(w.rates("old").publishes, 0.0);
    QCOMPARE(w.rates("never sampled"), TalkerRates());
}

void tst_TalkerRateWindow::burstAfterQuietIsOverTheWindow()
{
    TalkerRateWindow w;
    qint64 ms = 0;
    for (; ms <= 60000; ms += 1000)
        w.sample({talker("a", 7)}, ms);
    QCOMPARE(w.rates("a"), TalkerRates());
    // 100 messages in the last second: 10/s over the last 10 s.
    w.sample({talker("a", 107)}, ms);
    QCOMPARE(w.rates("a").publishes, 10.0);
    ms += 1000;
    w.sample({talker("a", 107)}, ms);
    QCOMPARE(w.rates("a").publishes, 10.0);
}

void tst_TalkerRateWindow::fallsToZeroAWindowAfterTrafficStops()
{
    TalkerRateWindow w;
    qint64 ms = 0;
    quint64 total = 0;
    for (; ms < 20000; ms += 1000, total += 100)
        w.sample({talker("a", total)}, ms);
    w.sample({talker("a", total)}, ms);
    QCOMPARE(w.rates("a").publishes, 100.0);
    // Stopped: the rate falls as the quiet seconds fill the window...
    ms += 1000;
    w.sample({talker("a", total)}, ms);
    QVERIFY(w.rates("a").publishes > 0);
    QVERIFY(w.rates("a").publishes < 100);
    // ...and is 0 once the window holds only quiet ones.
    for (int i = 0; i < 11; ++i) {
        ms += 1000;
        w.sample({talker("a", total)}, ms);
    }
    QCOMPARE(w.rates("a"), TalkerRates());
}

void tst_TalkerRateWindow::totalsThatGoDownStartAfresh()
{
    TalkerRateWindow w;
    w.sample({talker("a", 1000)}, 0);
    w.sample({talker("a", 2000)}, 1000);
    QCOMPARE(w.rates("a").publishes, 1000.0);
    // Forgotten and back between two samples: its totals count from zero again.
    w.sample({talker("a", 30)}, 2000);
    QCOMPARE(w.rates("a"), TalkerRates());
    w.sample({talker("a", 60)}, 3000);
    QCOMPARE(w.rates("a").publishes, 30.0);
}

void tst_TalkerRateWindow::forgottenIdentities()
{
    TalkerRateWindow w;
    w.sample({talker("a", 0), talker("b", 0)}, 0);
    w.sample({talker("a", 10), talker("b", 10)}, 1000);
    QCOMPARE(w.tracked(), 2);
    w.sample({talker("a", 20)}, 2000);
    QCOMPARE(w.tracked(), 1);
    QCOMPARE(w.rates("b"), TalkerRates());
    // Back later: a new start, not a rate over the time it was away.
    w.sample({talker("a", 30), talker("b", 500)}, 3000);
    QCOMPARE(w.rates("b"), TalkerRates());
}

void tst_TalkerRateWindow::samplesStayBounded()
{
    TalkerRateWindow w;
    qint64 ms = 0;
    for (int i = 0; i < 200; ++i, ms += 1000) {
        w.sample({talker("busy", quint64(i) * 10), talker("quiet", 5)}, ms);
        QVERIFY(w.samplesOf("busy") <= 12); // the window's 10 s at one a second, and the base
        QVERIFY(w.samplesOf("quiet") <= 2);
    }
    // Ten quiet samples in a row shrink a busy identity's history to its two ends.
    for (int i = 0; i < 12; ++i, ms += 1000)
        w.sample({talker("busy", 1990), talker("quiet", 5)}, ms);
    QCOMPARE(w.samplesOf("busy"), 2);
}

void tst_TalkerRateWindow::samplingCost()
{
    // 5,000 identities, every one publishing: the window of each is full (the worst case).
    QList<TalkerView> all;
    for (int i = 0; i < 5000; ++i)
        all.append(talker(QStringLiteral("svc-%1").arg(i), 0));
    TalkerRateWindow w;
    qint64 ms = 0;
    const auto step = [&] {
        ms += 1000;
        for (TalkerView &v : all)
            v.figures.publishes += 7;
        w.sample(all, ms);
    };
    for (int i = 0; i < 12; ++i)
        step();
    const double cpu = cmq::test::medianCpuMs(step);
    QCOMPARE(w.rates("svc-4999").publishes, 7.0);
    qInfo("one sample of %d busy identities: %.2f ms CPU (median of 7)", int(all.size()), cpu);
}

QTEST_APPLESS_MAIN(tst_TalkerRateWindow)
#include "tst_talkerratewindow.moc"
