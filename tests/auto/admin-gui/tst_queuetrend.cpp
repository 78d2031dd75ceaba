// Lag as time on the Queues tab (docs/ADMIN-GUI.md): whether a queue's lag is growing,
// shrinking or steady from two of the console's depth samples (table-driven), the window the
// trend looks back over in QueueDepthHistory, the trend, TTL, dead-letter and delivery-limit
// columns of QueueTableModel (shown and sorted), and the depth sparkline painted in the cell.

#include <algorithm>

#include <QApplication>
#include <QHeaderView>
#include <QImage>
#include <QJsonArray>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest>

#include "models/lagtrend.h"
#include "models/queuedepthhistory.h"
#include "models/queuetablemodel.h"
#include "ui/sparklinedelegate.h"

using cmq::admingui::classifyLagChange;
using cmq::admingui::DepthSample;
using cmq::admingui::JsonTableModel;
using cmq::admingui::LagChange;
using cmq::admingui::LagTrend;
using cmq::admingui::lagTrendOf;
using cmq::admingui::QueueDepthHistory;
using cmq::admingui::QueueTableModel;
using cmq::admingui::SparklineDelegate;

Q_DECLARE_METATYPE(LagTrend)

namespace {

QJsonObject queue(const QString &name, qint64 ready, qint64 lagMs)
{
    return QJsonObject{
        {"name", name}, {"ready", ready}, {"unacked", 0}, {"oldest_ready_age_ms", lagMs}};
}

} // namespace

class tst_QueueTrend : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void classify_data();
    void classify();
    void historyWindow_data();
    void historyWindow();
    void sampleAgoAcrossTheRing();
    void trendColumn();
    void policyColumns_data();
    void policyColumns();
    void sparklinePaintsTheHistory();
};

void tst_QueueTrend::classify_data()
{
    QTest::addColumn<double>("earlierSeconds");
    QTest::addColumn<qint64>("earlierLagMs");
    QTest::addColumn<double>("laterSeconds");
    QTest::addColumn<qint64>("laterLagMs");
    QTest::addColumn<LagTrend>("trend");
    QTest::addColumn<double>("msPerSecond");

    // Nobody consumes: the head ages as fast as the clock.
    QTest::newRow("stuck queue") << 100.0 << qint64(5000) << 110.0 << qint64(15000)
                                 << LagTrend::Growing << 1000.0;
    QTest::newRow("backlog starts")
        << 100.0 << qint64(0) << 110.0 << qint64(4000) << LagTrend::Growing << 400.0;
    QTest::newRow("consumers catch up")
        << 100.0 << qint64(30000) << 110.0 << qint64(2000) << LagTrend::Shrinking << -2800.0;
    QTest::newRow("drained") << 100.0 << qint64(8000) << 110.0 << qint64(0) << LagTrend::Shrinking
                             << -800.0;
    QTest::newRow("empty queue") << 100.0 << qint64(0) << 110.0 << qint64(0) << LagTrend::Steady
                                 << 0.0;
    // The gap between messages of a queue that keeps up: small ups and downs.
    QTest::newRow("jitter up") << 100.0 << qint64(1200) << 110.0 << qint64(2100) << LagTrend::Steady
                               << 90.0;
    QTest::newRow("jitter down") << 100.0 << qint64(2100) << 110.0 << qint64(1200)
                                 << LagTrend::Steady << -90.0;
    // Just at the threshold: a quarter of the 10 s that passed.
    QTest::newRow("threshold up") << 100.0 << qint64(1000) << 110.0 << qint64(3500)
                                  << LagTrend::Growing << 250.0;
    QTest::newRow("below threshold")
        << 100.0 << qint64(1000) << 110.0 << qint64(3499) << LagTrend::Steady << 249.9;
    // Over one second the minimum change (1 s) decides, not the quarter.
    QTest::newRow("one second, +0.9 s")
        << 100.0 << qint64(0) << 101.0 << qint64(900) << LagTrend::Steady << 900.0;
    QTest::newRow("one second, +1 s")
        << 100.0 << qint64(0) << 101.0 << qint64(1000) << LagTrend::Growing << 1000.0;
    QTest::newRow("same time") << 100.0 << qint64(0) << 100.0 << qint64(9000) << LagTrend::Unknown
                               << 0.0;
    QTest::newRow("clock went back")
        << 100.0 << qint64(0) << 90.0 << qint64(9000) << LagTrend::Unknown << 0.0;
}

void tst_QueueTrend::classify()
{
    QFETCH(double, earlierSeconds);
    QFETCH(qint64, earlierLagMs);
    QFETCH(double, laterSeconds);
    QFETCH(qint64, laterLagMs);
    QFETCH(LagTrend, trend);
    QFETCH(double, msPerSecond);
    const LagChange change =
        classifyLagChange({earlierSeconds, 1, 0, earlierLagMs}, {laterSeconds, 1, 0, laterLagMs});
    QCOMPARE(change.trend, trend);
    QVERIFY2(qAbs(change.msPerSecond - msPerSecond) < 1e-6,
             qPrintable(QString::number(change.msPerSecond)));
}

void tst_QueueTrend::historyWindow_data()
{
    QTest::addColumn<QList<qint64>>("lags"); // one snapshot a second, oldest first
    QTest::addColumn<LagTrend>("trend");
    QTest::addColumn<double>("overSeconds");

    QTest::newRow("no sample") << QList<qint64>{} << LagTrend::Unknown << 0.0;
    QTest::newRow("one sample") << QList<qint64>{5000} << LagTrend::Unknown << 0.0;
    QTest::newRow("two samples, stuck") << QList<qint64>{5000, 6000} << LagTrend::Growing << 1.0;
    // Looks back 10 s, not at the oldest sample: an old spike does not count any more.
    QTest::newRow("old spike outside the window")
        << QList<qint64>{60000, 2000, 2000, 2000, 2000, 2000, 2000,
                         2000,  2000, 2000, 2000, 2000, 2000, 2000}
        << LagTrend::Steady << 10.0;
    QTest::newRow("draining over the window")
        << QList<qint64>{20000, 18000, 16000, 14000, 12000, 10000, 8000, 6000, 4000, 2000, 0}
        << LagTrend::Shrinking << 10.0;
    QTest::newRow("less than the window held")
        << QList<qint64>{0, 1000, 2000, 3000} << LagTrend::Growing << 3.0;
}

void tst_QueueTrend::historyWindow()
{
    QFETCH(QList<qint64>, lags);
    QFETCH(LagTrend, trend);
    QFETCH(double, overSeconds);
    QueueDepthHistory history;
    for (qsizetype i = 0; i < lags.size(); ++i)
        history.addSnapshot(QJsonArray{queue("q", 1, lags[i])}, 50.0 + double(i));
    const LagChange change = lagTrendOf(history, "q");
    QCOMPARE(change.trend, trend);
    QCOMPARE(change.overSeconds, overSeconds);
    QCOMPARE(lagTrendOf(history, "unknown").trend, LagTrend::Unknown);
}

void tst_QueueTrend::sampleAgoAcrossTheRing()
{
    QueueDepthHistory history(3);
    for (int i = 1; i <= 5; ++i) // the ring wraps: samples 3, 4, 5 remain
        history.addSnapshot(QJsonArray{queue("q", i, i * 100)}, double(i));
    QCOMPARE(history.sampleCount("q"), 3);
    QCOMPARE(history.sampleAgo("q", 0).ready, 5);
    QCOMPARE(history.sampleAgo("q", 1).ready, 4);
    QCOMPARE(history.sampleAgo("q", 2).lagMs, 300);
    QCOMPARE(history.sampleAgo("q", 3).seconds, 0.0); // past the oldest: an empty sample
    QList<qint64> recent;
    for (const DepthSample &s : history.recent("q", 2))
        recent << s.ready;
    QCOMPARE(recent, (QList<qint64>{4, 5}));
    QCOMPARE(history.recent("q", 10).size(), 3);
}

void tst_QueueTrend::trendColumn()
{
    QueueDepthHistory history;
    QueueTableModel model;
    model.setDepthHistory(&history);
    const auto snapshot = [&](double seconds, qint64 stuckLag, qint64 idleLag) {
        const QJsonArray queues{queue("stuck", 7, stuckLag), queue("idle", 0, idleLag)};
        history.addSnapshot(queues, seconds);
        model.updateQueues(queues, seconds);
    };
    const auto cell = [&](const char *name, int role) {
        return model.index(model.rowOf(name), QueueTableModel::LagTrendColumn).data(role);
    };
    snapshot(1, 10000, 0);
    QCOMPARE(cell("stuck", Qt::DisplayRole).toString(), QStringLiteral("–"));
    QVERIFY(cell("stuck", Qt::ToolTipRole).toString().contains("Not enough snapshots"));
    snapshot(2, 11000, 0);
    snapshot(3, 12000, 0);
    QCOMPARE(cell("stuck", Qt::DisplayRole).toString(), QStringLiteral("growing"));
    QCOMPARE(cell("idle", Qt::DisplayRole).toString(), QStringLiteral("steady"));
    QCOMPARE(cell("stuck", Qt::ToolTipRole).toString(),
             QStringLiteral("Lag growing: +1.00 s per second over the last 2 s"));
    // Sorting by the column puts growing above steady (descending) and shrinking below.
    QVERIFY(cell("stuck", JsonTableModel::SortRole).toDouble() >
            cell("idle", JsonTableModel::SortRole).toDouble());
    QCOMPARE(model.headerData(QueueTableModel::LagTrendColumn, Qt::Horizontal, Qt::DisplayRole)
                 .toString(),
             QStringLiteral("Trend"));
    QVERIFY(model.headerData(QueueTableModel::LagTrendColumn, Qt::Horizontal, Qt::ToolTipRole)
                .toString()
                .contains("growing, shrinking or steady"));

    // Consumed again at the old pace: the growth of seconds 1 to 3 still counts until the
    // threshold (a quarter of the time looked back over) passes it, at second 10.
    for (double t = 4; t <= 9; ++t)
        snapshot(t, 12000, 0);
    QCOMPARE(cell("stuck", Qt::DisplayRole).toString(), QStringLiteral("growing"));
    // A trend that changes while the queue's JSON does not is still redrawn.
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    snapshot(10, 12000, 0);
    QCOMPARE(cell("stuck", Qt::DisplayRole).toString(), QStringLiteral("steady"));
    QCOMPARE(changed.size(), 1);
    // Consumers catch up.
    snapshot(11, 0, 0);
    QCOMPARE(cell("stuck", Qt::DisplayRole).toString(), QStringLiteral("shrinking"));
    QVERIFY(cell("stuck", JsonTableModel::SortRole).toDouble() <
            cell("idle", JsonTableModel::SortRole).toDouble());
    // The Depth column (ready + unacked) sorts as a number.
    QCOMPARE(model.index(model.rowOf("stuck"), QueueTableModel::Depth)
                 .data(JsonTableModel::SortRole)
                 .toDouble(),
             7.0);
}

void tst_QueueTrend::policyColumns_data()
{
    QTest::addColumn<QJsonObject>("settings");
    QTest::addColumn<QString>("ttl");
    QTest::addColumn<QString>("deadLetter");
    QTest::addColumn<QString>("deliveryLimit");

    QTest::newRow("none") << QJsonObject{{"message_ttl_ms", 0},
                                         {"dead_letter_exchange", ""},
                                         {"dead_letter_routing_key", ""},
                                         {"delivery_limit", 0}}
                          << "none"
                          << ""
                          << "none";
    QTest::newRow("older broker without the fields") << QJsonObject{} << "none"
                                                     << ""
                                                     << "none";
    QTest::newRow("dlx with the message's own key")
        << QJsonObject{{"message_ttl_ms", 60000},
                       {"dead_letter_exchange", "svc_dlx"},
                       {"dead_letter_routing_key", ""},
                       {"delivery_limit", 5}}
        << "60"
        << "svc_dlx"
        << "5";
    QTest::newRow("dlx and key, sub-second ttl")
        << QJsonObject{{"message_ttl_ms", 250},
                       {"dead_letter_exchange", "svc_dlx"},
                       {"dead_letter_routing_key", "svc_parked"},
                       {"delivery_limit", 1}}
        << "0.25"
        << "svc_dlx → svc_parked"
        << "1";
}

void tst_QueueTrend::policyColumns()
{
    QFETCH(QJsonObject, settings);
    QFETCH(QString, ttl);
    QFETCH(QString, deadLetter);
    QFETCH(QString, deliveryLimit);
    QJsonObject row = queue("q", 0, 0);
    for (auto it = settings.begin(); it != settings.end(); ++it)
        row.insert(it.key(), it.value());
    QueueTableModel model;
    model.update(QJsonArray{row});
    const auto text = [&](int column) { return model.index(0, column).data().toString(); };
    QCOMPARE(text(QueueTableModel::MessageTtl), ttl);
    QCOMPARE(text(QueueTableModel::DeadLetter), deadLetter);
    QCOMPARE(text(QueueTableModel::DeliveryLimit), deliveryLimit);
    // "none" sorts as 0, below any limit.
    QCOMPARE(model.index(0, QueueTableModel::DeliveryLimit).data(JsonTableModel::SortRole).typeId(),
             QMetaType::Double);
    const QString tip =
        model.index(0, QueueTableModel::DeadLetter).data(Qt::ToolTipRole).toString();
    QVERIFY2(deadLetter.isEmpty() ? tip.contains("No dead-letter exchange")
                                  : tip.contains(settings.value("dead_letter_exchange").toString()),
             qPrintable(tip));
    QCOMPARE(
        model.headerData(QueueTableModel::MessageTtl, Qt::Horizontal, Qt::DisplayRole).toString(),
        QStringLiteral("TTL (s)"));
}

void tst_QueueTrend::sparklinePaintsTheHistory()
{
    QueueDepthHistory history;
    QueueTableModel model;
    model.setDepthHistory(&history);
    for (int i = 0; i < 30; ++i) {
        // "rising" climbs, "flat" stays empty.
        const QJsonArray queues{queue("rising", i * 10, 0), queue("flat", 0, 0)};
        history.addSnapshot(queues, double(i));
        model.updateQueues(queues, double(i));
    }
    QTableView view;
    view.setModel(&model);
    auto *delegate = new SparklineDelegate(history, &view);
    view.setItemDelegateForColumn(QueueTableModel::Depth, delegate);
    view.horizontalHeader()->resizeSection(QueueTableModel::Depth, 200);
    view.verticalHeader()->setDefaultSectionSize(30);
    view.resize(1600, 200);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QImage image = view.viewport()->grab().toImage();
    const QColor line = view.palette().color(QPalette::Highlight);
    // Pixels of the line's colour in each row's Depth cell, left of the depth text.
    const auto linePixels = [&](const char *name) {
        const QRect cell = view.visualRect(model.index(model.rowOf(name), QueueTableModel::Depth));
        int count = 0;
        for (int x = cell.left(); x < cell.right() - 40; ++x) {
            for (int y = cell.top(); y <= cell.bottom(); ++y) {
                const QColor c = image.pixelColor(x, y);
                if (qAbs(c.red() - line.red()) < 40 && qAbs(c.green() - line.green()) < 40 &&
                    qAbs(c.blue() - line.blue()) < 40)
                    ++count;
            }
        }
        return count;
    };
    const int rising = linePixels("rising");
    const int flat = linePixels("flat");
    QVERIFY2(rising > 30, qPrintable(QString::number(rising)));
    QVERIFY2(flat > 10, qPrintable(QString::number(flat))); // a line along the bottom
    // The rising line spans rows of pixels, the flat one stays within two or three.
    const auto lineHeight = [&](const char *name) {
        const QRect cell = view.visualRect(model.index(model.rowOf(name), QueueTableModel::Depth));
        int top = cell.bottom(), bottom = cell.top();
        for (int x = cell.left(); x < cell.right() - 40; ++x) {
            for (int y = cell.top(); y <= cell.bottom(); ++y) {
                const QColor c = image.pixelColor(x, y);
                if (qAbs(c.red() - line.red()) < 40 && qAbs(c.green() - line.green()) < 40 &&
                    qAbs(c.blue() - line.blue()) < 40) {
                    top = std::min(top, y);
                    bottom = std::max(bottom, y);
                }
            }
        }
        return bottom - top;
    };
    QVERIFY2(lineHeight("rising") > 15, qPrintable(QString::number(lineHeight("rising"))));
    QVERIFY2(lineHeight("flat") <= 3, qPrintable(QString::number(lineHeight("flat"))));
}

QTEST_MAIN(tst_QueueTrend)
#include "tst_queuetrend.moc"
