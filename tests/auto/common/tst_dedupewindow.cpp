// The receiver's memory of handled message ids: bounded, oldest forgotten first.

#include <QTest>

#include "client/dedupewindow.h"

using cmq::client::DedupeWindow;

class tst_DedupeWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void remembersWithinCapacity();
    void forgetsOldestFirst();
    void readdingDoesNotRefreshOrDuplicate();
    void capacityAtLeastOne();
};

void tst_DedupeWindow::remembersWithinCapacity()
{
    DedupeWindow window(3);
    QVERIFY(!window.contains("a"));
    window.add("a");
    window.add("b");
    window.add("c");
    QVERIFY(window.contains("a") && window.contains("b") && window.contains("c"));
    QVERIFY(!window.contains("d"));
    QCOMPARE(window.size(), 3);
}

void tst_DedupeWindow::forgetsOldestFirst()
{
    DedupeWindow window(2);
    window.add("a");
    window.add("b");
    window.add("c");
    QVERIFY(!window.contains("a"));
    QVERIFY(window.contains("b") && window.contains("c"));
    QCOMPARE(window.size(), 2);
}

void tst_DedupeWindow::readdingDoesNotRefreshOrDuplicate()
{
    DedupeWindow window(2);
    window.add("a");
    window.add("a");
    QCOMPARE(window.size(), 1);
    window.add("b");
    window.add("c"); // "a" is the oldest, re-adding did not make it younger
    QVERIFY(!window.contains("a"));
    QCOMPARE(window.size(), 2);
}

void tst_DedupeWindow::capacityAtLeastOne()
{
    DedupeWindow window(0);
    QCOMPARE(window.capacity(), 1);
    window.add("a");
    QVERIFY(window.contains("a"));
    window.add("b");
    QVERIFY(!window.contains("a"));
}

QTEST_GUILESS_MAIN(tst_DedupeWindow)
#include "tst_dedupewindow.moc"
