// TalkerTableModel: one row per CN from the snapshot's "talkers"; publish/s and deliver/s are
// the change of the totals over the last window of snapshots (not just the last two), a total
// that goes back starts the identity afresh, and the busiest identities come first for the
// chart. A page of the list carries the broker's rates, which are shown as they are. Snapshots
// are given with their times; no broker, no clock.

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonObject>
#include <QSortFilterProxyModel>
#include <QtTest>

#include "models/talkertablemodel.h"

using cmq::admingui::JsonTableModel;
using cmq::admingui::TalkerTableModel;

namespace {

// "svc-a:10:2,svc-b:4:0" → svc-a (10 publishes, 2 deliveries), svc-b (4, 0).
QJsonArray talkers(const QString &spec)
{
    QJsonArray array;
    for (const QString &item : spec.split(',', Qt::SkipEmptyParts)) {
        const QStringList parts = item.split(':');
        const int publishes = parts.value(1).toInt();
        const int deliveries = parts.value(2).toInt();
        array.append(QJsonObject{{"cn", parts[0]},
                                 {"connections", 1},
                                 {"publishes", publishes},
                                 {"deliveries", deliveries},
                                 {"requests", publishes + deliveries},
                                 {"bytes_in", publishes * 100},
                                 {"bytes_out", deliveries * 100},
                                 {"idle_seconds", 0}});
    }
    return array;
}

} // namespace

class tst_TalkerTableModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void rates_data();
    void rates();
    void hiddenThenShown_data();
    void hiddenThenShown();
    void topTalkers_data();
    void topTalkers();
    void sortsByRate();
    void historyIsBounded();
    void brokerRatesOfAPage();
    void modelTester();
};

void tst_TalkerTableModel::rates_data()
{
    // Snapshots "time=spec;time=spec;..." of one identity svc-a, window 10 s.
    QTest::addColumn<QString>("snapshots");
    QTest::addColumn<double>("publishRate");
    QTest::addColumn<double>("deliverRate");
    QTest::newRow("seen once: no rate yet") << "0=svc-a:10:0" << 0.0 << 0.0;
    QTest::newRow("two snapshots") << "0=svc-a:10:0;2=svc-a:30:4" << 10.0 << 2.0;
    QTest::newRow("averaged over the window, not the last step")
        << "0=svc-a:0:0;1=svc-a:10:0;2=svc-a:10:0;3=svc-a:10:0;4=svc-a:10:0" << 2.5 << 0.0;
    QTest::newRow("older than the window drops out")
        << "0=svc-a:0:0;5=svc-a:100:0;15=svc-a:100:0;20=svc-a:110:0" << 10.0 / 15.0 << 0.0;
    QTest::newRow("totals went back: afresh")
        << "0=svc-a:100:50;1=svc-a:200:60;2=svc-a:5:0;4=svc-a:25:2" << 10.0 << 1.0;
    QTest::newRow("uptime went back (broker restarted): afresh")
        << "10=svc-a:100:0;11=svc-a:200:0;1=svc-a:300:0;3=svc-a:306:0" << 3.0 << 0.0;
    QTest::newRow("idle after traffic: the rate decays within the window")
        << "0=svc-a:0:0;10=svc-a:100:0;20=svc-a:100:0" << 0.0 << 0.0;
}

void tst_TalkerTableModel::rates()
{
    QFETCH(QString, snapshots);
    QFETCH(double, publishRate);
    QFETCH(double, deliverRate);
    TalkerTableModel model;
    model.setWindowSeconds(10);
    for (const QString &snapshot : snapshots.split(';')) {
        const QStringList parts = snapshot.split('=');
        model.updateTalkers(talkers(parts[1]), parts[0].toDouble());
    }
    QCOMPARE(model.publishRate("svc-a"), publishRate);
    QCOMPARE(model.deliverRate("svc-a"), deliverRate);
    const int row = model.rowOf("svc-a");
    QCOMPARE(model.data(model.index(row, TalkerTableModel::PublishRate), JsonTableModel::SortRole)
                 .toDouble(),
             publishRate);
}

void tst_TalkerTableModel::hiddenThenShown_data()
{
    // Snapshots "time=spec;..." (window 10 s); "h" before the time: the Talkers tab hidden.
    // Then the tab is shown (showPendingRows). `before`: the publish/s the row of `cn` shows
    // just before (-1: no row yet); `after`: what it shows then.
    QTest::addColumn<QString>("snapshots");
    QTest::addColumn<QString>("cn");
    QTest::addColumn<double>("before");
    QTest::addColumn<double>("after");
    QTest::newRow("hidden from the start: no rows, then exact rates")
        << "h0=svc-a:0:0;h1=svc-a:10:0;h2=svc-a:20:0;h3=svc-a:30:0" << "svc-a" << -1.0 << 10.0;
    QTest::newRow("shown, then hidden: the old figures until shown")
        << "0=svc-a:0:0;1=svc-a:10:0;h2=svc-a:30:0;h8=svc-a:90:0" << "svc-a" << 10.0 << 11.25;
    QTest::newRow("a flooder that came while hidden")
        << "0=a:0:0;h1=a:1:0,f:0:0;h6=a:6:0,f:500:0;h7=a:7:0,f:600:0" << "f" << -1.0 << 100.0;
    QTest::newRow("shown again at once: nothing pending")
        << "0=svc-a:0:0;2=svc-a:10:0" << "svc-a" << 5.0 << 5.0;
}

void tst_TalkerTableModel::hiddenThenShown()
{
    QFETCH(QString, snapshots);
    QFETCH(QString, cn);
    QFETCH(double, before);
    QFETCH(double, after);
    TalkerTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setWindowSeconds(10);
    for (QString snapshot : snapshots.split(';')) {
        const bool hidden = snapshot.startsWith('h');
        const QStringList parts = snapshot.remove(0, hidden ? 1 : 0).split('=');
        model.updateTalkers(talkers(parts[1]), parts[0].toDouble(), !hidden);
    }
    const auto shownRate = [&] {
        const int row = model.rowOf(cn);
        return row < 0 ? -1.0
                       : model.index(row, TalkerTableModel::PublishRate)
                             .data(JsonTableModel::SortRole)
                             .toDouble();
    };
    QCOMPARE(shownRate(), before);
    model.showPendingRows();
    QVERIFY(!model.rowsPending());
    QCOMPARE(shownRate(), after);
    QCOMPARE(model.publishRate(cn), after);
    QCOMPARE(model.topTalkers(1), QStringList{cn});
}

void tst_TalkerTableModel::topTalkers_data()
{
    QTest::addColumn<QString>("first");
    QTest::addColumn<QString>("second");
    QTest::addColumn<int>("n");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("busiest first") << "a:0:0,b:0:0,c:0:0"
                                   << "a:5:0,b:50:0,c:10:0" << 3 << QStringList{"b", "c", "a"};
    QTest::newRow("deliveries count too") << "a:0:0,b:0:0"
                                          << "a:5:0,b:0:9" << 2 << QStringList{"b", "a"};
    QTest::newRow("at most n") << "a:0:0,b:0:0,c:0:0"
                               << "a:5:0,b:50:0,c:10:0" << 2 << QStringList{"b", "c"};
    QTest::newRow("idle ones left out") << "a:0:0,b:3:0"
                                        << "a:1:0,b:3:0" << 5 << QStringList{"a"};
    QTest::newRow("ties by cn") << "b:0:0,a:0:0"
                                << "b:4:0,a:4:0" << 2 << QStringList{"a", "b"};
}

void tst_TalkerTableModel::topTalkers()
{
    QFETCH(QString, first);
    QFETCH(QString, second);
    QFETCH(int, n);
    QFETCH(QStringList, expected);
    TalkerTableModel model;
    model.updateTalkers(talkers(first), 100);
    model.updateTalkers(talkers(second), 101);
    QCOMPARE(model.topTalkers(n), expected);
}

void tst_TalkerTableModel::sortsByRate()
{
    // A table sorted by publish/s shows the heavier publisher first, though it has the
    // smaller total (it started later).
    TalkerTableModel model;
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setSortRole(JsonTableModel::SortRole);
    proxy.sort(TalkerTableModel::PublishRate, Qt::DescendingOrder);
    model.updateTalkers(talkers("old-timer:1000:0,flooder:0:0"), 0);
    model.updateTalkers(talkers("old-timer:1001:0,flooder:500:0"), 1);
    QCOMPARE(proxy.rowCount(), 2);
    QCOMPARE(proxy.index(0, TalkerTableModel::Cn).data().toString(), QString("flooder"));
    QCOMPARE(proxy.index(0, TalkerTableModel::PublishRate).data().toString(), QString("500"));
    QCOMPARE(proxy.index(1, TalkerTableModel::Cn).data().toString(), QString("old-timer"));
    // An identity the broker stopped listing leaves the table.
    model.updateTalkers(talkers("flooder:600:0"), 2);
    QCOMPARE(proxy.rowCount(), 1);
    QVERIFY(model.history("old-timer").isEmpty());
}

void tst_TalkerTableModel::historyIsBounded()
{
    TalkerTableModel model;
    for (int i = 0; i < TalkerTableModel::HistoryPoints + 50; ++i)
        model.updateTalkers(talkers(QStringLiteral("svc-a:%1:0").arg(i * 2)), i);
    const auto points = model.history("svc-a");
    QCOMPARE(points.size(), TalkerTableModel::HistoryPoints);
    QCOMPARE(points.last().seconds, double(TalkerTableModel::HistoryPoints + 49));
    QCOMPARE(points.last().publish, 2.0);
    QVERIFY(points.first().seconds < points.last().seconds);
}

// A page ordered by the broker's rates shows those rates, not the window's over its totals
// (which would order the rows differently); back to the whole list, the window's again.
void tst_TalkerTableModel::brokerRatesOfAPage()
{
    TalkerTableModel model;
    model.setWindowSeconds(10);
    model.updateTalkers(talkers("svc-a:0:0,svc-b:0:0"), 0);
    const auto page = [](double seconds, double rateA) {
        QJsonArray rows = talkers(
            QStringLiteral("svc-a:%1:0,svc-b:%2:0").arg(int(seconds) * 10).arg(int(seconds) * 50));
        QJsonObject a = rows[0].toObject();
        a.insert("publish_rate", rateA);
        a.insert("deliver_rate", 1.5);
        a.insert("bytes_in_rate", 900.0);
        a.insert("bytes_out_rate", 0.0);
        rows[0] = a;
        QJsonObject b = rows[1].toObject();
        b.insert("publish_rate", 0.25);
        b.insert("deliver_rate", 0.0);
        b.insert("bytes_in_rate", 0.0);
        b.insert("bytes_out_rate", 0.0);
        rows[1] = b;
        return rows;
    };
    model.updateTalkers(page(2, 75.5), 2);
    QVERIFY(model.brokerRates());
    QCOMPARE(model.publishRate("svc-a"), 75.5);
    QCOMPARE(model.deliverRate("svc-a"), 1.5);
    QCOMPARE(model.publishRate("svc-b"), 0.25); // its totals moved 50/s: not what is shown
    const int a = model.rowOf("svc-a");
    QCOMPARE(model.index(a, TalkerTableModel::BytesInRate).data(JsonTableModel::SortRole),
             QVariant(900.0));
    QCOMPARE(model.topTalkers(2), (QStringList{"svc-a", "svc-b"}));

    model.updateTalkers(talkers("svc-a:40:0,svc-b:200:0"), 4);
    QVERIFY(!model.brokerRates());
    QCOMPARE(model.publishRate("svc-b"), 50.0); // (200 - 0) / 4 s
}

void tst_TalkerTableModel::modelTester()
{
    TalkerTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.updateTalkers(talkers("a:1:0,b:2:0"), 0);
    model.updateTalkers(talkers("b:4:0,c:1:1"), 1);
    model.clear();
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.columnCount(), int(TalkerTableModel::ColumnCount));
}

QTEST_MAIN(tst_TalkerTableModel)
#include "tst_talkertablemodel.moc"
