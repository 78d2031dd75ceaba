// Reconnect pauses: doubling from the initial pause up to the maximum, each drawn from the upper
// half of its step so clients spread out, and back to the start after a success.

#include <QTest>

#include "client/backoff.h"

using cmq::client::Backoff;

class tst_Backoff : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void steps_data();
    void steps();
    void jitterSpreadsClients();
    void resetStartsOver();
    void neverOverflows();
};

void tst_Backoff::steps_data()
{
    QTest::addColumn<int>("initial");
    QTest::addColumn<int>("max");
    QTest::addColumn<QList<int>>("ceilings"); // the step d of each attempt: pause in [d/2, d]
    QTest::newRow("doubling") << 100 << 10000 << QList<int>{100, 200, 400, 800, 1600};
    QTest::newRow("capped") << 250 << 1000 << QList<int>{250, 500, 1000, 1000, 1000};
    QTest::newRow("max below initial") << 500 << 100 << QList<int>{500, 500, 500};
    QTest::newRow("zero initial") << 0 << 4 << QList<int>{1, 2, 4, 4};
}

void tst_Backoff::steps()
{
    QFETCH(int, initial);
    QFETCH(int, max);
    QFETCH(QList<int>, ceilings);
    // Many generators: the bounds must hold for every draw, not for one lucky seed.
    for (quint32 seed = 1; seed <= 50; ++seed) {
        Backoff backoff(initial, max);
        backoff.setGenerator(QRandomGenerator(seed));
        for (int ceiling : ceilings) {
            const int pause = backoff.nextDelayMs();
            QVERIFY2(pause >= ceiling / 2 && pause <= ceiling,
                     qPrintable(QStringLiteral("pause %1 outside [%2, %3]")
                                    .arg(pause)
                                    .arg(ceiling / 2)
                                    .arg(ceiling)));
        }
        QCOMPARE(backoff.failures(), int(ceilings.size()));
    }
}

void tst_Backoff::jitterSpreadsClients()
{
    // A hundred clients cut off at the same moment do not all come back at the same moment.
    QSet<int> pauses;
    for (quint32 seed = 1; seed <= 100; ++seed) {
        Backoff backoff(1000, 60000);
        backoff.setGenerator(QRandomGenerator(seed));
        pauses.insert(backoff.nextDelayMs());
    }
    QVERIFY2(pauses.size() > 50, qPrintable(QString::number(pauses.size())));
}

void tst_Backoff::resetStartsOver()
{
    Backoff backoff(100, 10000);
    for (int i = 0; i < 6; ++i)
        backoff.nextDelayMs();
    backoff.reset();
    QCOMPARE(backoff.failures(), 0);
    QVERIFY(backoff.nextDelayMs() <= 100);
}

void tst_Backoff::neverOverflows()
{
    Backoff backoff(1000, 30000);
    for (int i = 0; i < 1000; ++i) {
        const int pause = backoff.nextDelayMs();
        QVERIFY(pause >= 500 && pause <= 30000);
    }
}

QTEST_GUILESS_MAIN(tst_Backoff)
#include "tst_backoff.moc"
