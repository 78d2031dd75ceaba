// QueueDepthHistory: one bounded ring of depth samples per queue, oldest first, forgotten when
// the queue vanishes or the broker restarts.

#include <QJsonArray>
#include <QJsonObject>
#include <QtTest>

#include "models/queuedepthhistory.h"

using cmq::admingui::DepthSample;
using cmq::admingui::QueueDepthHistory;

namespace {

QJsonArray queues(const QStringList &names, int ready, int unacked = 0)
{
    QJsonArray array;
    for (const QString &name : names)
        array.append(QJsonObject{{"name", name}, {"ready", ready}, {"unacked", unacked}});
    return array;
}

QList<qint64> readies(const QList<DepthSample> &samples)
{
    QList<qint64> list;
    for (const DepthSample &s : samples)
        list.append(s.ready);
    return list;
}

} // namespace

class tst_QueueDepthHistory : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void ring_data();
    void ring();
    void perQueueAndVanished();
    void brokerRestartClears();
};

void tst_QueueDepthHistory::ring_data()
{
    QTest::addColumn<int>("capacity");
    QTest::addColumn<int>("snapshots");
    QTest::addColumn<QList<qint64>>("expected"); // ready per kept sample, oldest first

    QTest::newRow("empty") << 3 << 0 << QList<qint64>{};
    QTest::newRow("below capacity") << 3 << 2 << QList<qint64>{0, 1};
    QTest::newRow("exactly full") << 3 << 3 << QList<qint64>{0, 1, 2};
    QTest::newRow("wrapped once") << 3 << 4 << QList<qint64>{1, 2, 3};
    QTest::newRow("wrapped twice") << 3 << 8 << QList<qint64>{5, 6, 7};
    QTest::newRow("capacity one") << 1 << 5 << QList<qint64>{4};
}

void tst_QueueDepthHistory::ring()
{
    QFETCH(int, capacity);
    QFETCH(int, snapshots);
    QFETCH(QList<qint64>, expected);
    QueueDepthHistory history(capacity);
    for (int i = 0; i < snapshots; ++i)
        history.addSnapshot(queues({"q"}, i, 1), 10.0 + i);
    const QList<DepthSample> samples = history.samples("q");
    QCOMPARE(readies(samples), expected);
    for (int i = 1; i < samples.size(); ++i)
        QVERIFY(samples[i].seconds > samples[i - 1].seconds);
    for (const DepthSample &s : samples)
        QCOMPARE(s.unacked, 1);
}

void tst_QueueDepthHistory::perQueueAndVanished()
{
    QueueDepthHistory history(10);
    history.addSnapshot(queues({"a", "b"}, 1), 1);
    history.addSnapshot(queues({"a", "b"}, 2), 2);
    QCOMPARE(history.queueCount(), 2);
    history.addSnapshot(queues({"a"}, 3), 3); // b deleted
    QCOMPARE(history.queueCount(), 1);
    QCOMPARE(readies(history.samples("a")), (QList<qint64>{1, 2, 3}));
    QVERIFY(history.samples("b").isEmpty());
    // Recreated later: a new queue, a new curve.
    history.addSnapshot(queues({"a", "b"}, 4), 4);
    QCOMPARE(readies(history.samples("b")), QList<qint64>{4});
    QVERIFY(history.samples("unknown").isEmpty());
}

void tst_QueueDepthHistory::brokerRestartClears()
{
    QueueDepthHistory history(10);
    history.addSnapshot(queues({"a"}, 5), 100);
    history.addSnapshot(queues({"a"}, 6), 101);
    history.addSnapshot(queues({"a"}, 7), 2); // uptime went back: restarted broker
    QCOMPARE(readies(history.samples("a")), QList<qint64>{7});
}

QTEST_APPLESS_MAIN(tst_QueueDepthHistory)
#include "tst_queuedepthhistory.moc"
