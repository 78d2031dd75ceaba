// The token bucket on a hand-moved clock: it starts full, refills by elapsed time at `rate`
// up to `burst`, and refuses at exactly the points the arithmetic says.

#include <QTest>

#include "limits/tokenbucket.h"

using cmq::limits::TokenBucket;

constexpr qint64 kMs = 1000000;

class tst_TokenBucket : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void rejectionPoints_data();
    void rejectionPoints();
    void refillIsCappedAtBurst();
    void debtFromLargeCost();
    void reconfigureKeepsTokens();
    void clockGoingBackwardsEarnsNothing();
};

void tst_TokenBucket::rejectionPoints_data()
{
    // At each step the clock is at `atMs`; "1" = a request is accepted, "0" = refused.
    QTest::addColumn<double>("rate");
    QTest::addColumn<double>("burst");
    QTest::addColumn<QList<int>>("atMs");
    QTest::addColumn<QString>("outcomes");
    QTest::newRow("burst of 3 then refused")
        << 2.0 << 3.0 << QList<int>{0, 0, 0, 0} << QStringLiteral("1110");
    // 2/s: one token every 500 ms; at 499 ms there is 0.998 of one.
    QTest::newRow("refill at 500 ms, not 499")
        << 2.0 << 1.0 << QList<int>{0, 0, 499, 500, 500} << QStringLiteral("10010");
    QTest::newRow("steady at the rate")
        << 10.0 << 1.0 << QList<int>{0, 100, 200, 250, 300, 399, 400} << QStringLiteral("1110101");
    QTest::newRow("fractional rate")
        << 0.5 << 1.0 << QList<int>{0, 1999, 2000} << QStringLiteral("101");
    QTest::newRow("burst refills after idle")
        << 100.0 << 5.0 << QList<int>{0, 0, 0, 0, 0, 0, 50, 50, 50, 50, 50, 50}
        << QStringLiteral("111110111110");
}

void tst_TokenBucket::rejectionPoints()
{
    QFETCH(double, rate);
    QFETCH(double, burst);
    QFETCH(QList<int>, atMs);
    QFETCH(QString, outcomes);
    const qint64 base = 7 * kMs;
    TokenBucket bucket(rate, burst, base);
    QString got;
    for (int ms : atMs) {
        const qint64 now = base + ms * kMs;
        const bool ok = bucket.has(now, 1.0);
        if (ok)
            bucket.take(1.0);
        got += ok ? u'1' : u'0';
    }
    QCOMPARE(got, outcomes);
}

void tst_TokenBucket::refillIsCappedAtBurst()
{
    TokenBucket bucket(10.0, 4.0, 0);
    QCOMPARE(bucket.tokens(0), 4.0);
    QVERIFY(bucket.has(0, 1.0));
    bucket.take(1.0);
    QCOMPARE(bucket.tokens(0), 3.0);
    QCOMPARE(bucket.tokens(3600 * 1000 * kMs), 4.0);
    QVERIFY(bucket.isFull(100 * kMs));
    QCOMPARE(bucket.nsUntilFull(0), 100 * kMs);
}

void tst_TokenBucket::debtFromLargeCost()
{
    // A batch needs one token and may take more, leaving the bucket in debt.
    TokenBucket bucket(10.0, 5.0, 0);
    QVERIFY(bucket.has(0, 1.0));
    bucket.take(25.0);
    QCOMPARE(bucket.tokens(0), -20.0);
    QVERIFY(!bucket.has(2000 * kMs, 1.0)); // -20 + 20 = 0
    QVERIFY(!bucket.has(2099 * kMs, 1.0));
    QVERIFY(bucket.has(2100 * kMs, 1.0)); // 1 token again
}

void tst_TokenBucket::reconfigureKeepsTokens()
{
    TokenBucket bucket(1.0, 10.0, 0);
    bucket.take(4.0); // 6 left
    bucket.configure(100.0, 3.0, 0);
    QCOMPARE(bucket.tokens(0), 3.0); // capped at the new burst
    bucket.take(3.0);
    QCOMPARE(bucket.tokens(10 * kMs), 1.0); // the new rate
    bucket.configure(1.0, 50.0, 10 * kMs);
    QCOMPARE(bucket.tokens(10 * kMs), 1.0); // a larger burst is not a gift
}

void tst_TokenBucket::clockGoingBackwardsEarnsNothing()
{
    TokenBucket bucket(1.0, 1.0, 5000 * kMs);
    bucket.take(1.0);
    QVERIFY(!bucket.has(4000 * kMs, 1.0));
    QVERIFY(!bucket.has(5999 * kMs, 1.0));
    QVERIFY(bucket.has(6000 * kMs, 1.0));
}

QTEST_APPLESS_MAIN(tst_TokenBucket)
#include "tst_tokenbucket.moc"
