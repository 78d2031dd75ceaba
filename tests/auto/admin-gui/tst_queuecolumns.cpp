// The Queues tab's columns at 1280x800, in the real window fed a snapshot like the one of
// scripts/screenshots.sh (docs/images/queues.png): every shown column gets the width its
// header and cells ask for and still no horizontal scrolling is needed; Limit and Overflow
// start hidden, and the header's context menu (one checkable entry per column, with its
// tooltip, and "Show all columns") shows and hides columns, which the saved layout keeps.

#include <algorithm>
#include <memory>

#include <QHeaderView>
#include <QJsonArray>
#include <QJsonObject>
#include <QMenu>
#include <QScrollBar>
#include <QSettings>
#include <QStandardPaths>
#include <QtTest>

#include "ui/mainwindow.h"
#include "ui/tablepage.h"

using cmq::admingui::MainWindow;
using cmq::admingui::QueueTableModel;

namespace {

QJsonObject queue(const QString &name, const QString &owner, int ready, int ageMs)
{
    return {{"name", name},          {"owner", owner},          {"max_length", 10000},
            {"overflow", "drop-head"}, {"ready", ready},          {"unacked", 12},
            {"consumers", 1},        {"published", 123456},     {"delivered", 120000},
            {"evicted", 1234},       {"oldest_ready_age_ms", ageMs}};
}

// The queues of the screenshot run, with its dead-letter settings and longer figures.
QJsonObject snapshot(double uptime, int ready)
{
    QJsonObject audit = queue("worker-svc-1_audit", "worker-svc-1", ready, 4000);
    audit.insert("message_ttl_ms", 4000);
    audit.insert("dead_letter_exchange", "worker-svc-1_dlx");
    audit.insert("delivery_limit", 3);
    QJsonObject parked = queue("both-svc_in", "both-svc", ready, 95000);
    parked.insert("message_ttl_ms", 600000);
    parked.insert("dead_letter_exchange", "both-svc_dlx");
    parked.insert("dead_letter_routing_key", "parked");
    parked.insert("delivery_limit", 1000);
    const QJsonArray queues{queue("expiring-soon_queue", "expiring-soon", 0, 0),
                            queue("receiver_1_queue", "receiver_1", 18, 250),
                            queue("receiver_2_queue", "receiver_2", ready * 10, 123400),
                            audit,
                            parked,
                            queue("worker-svc-1_dlq", "worker-svc-1", ready, 61000)};
    return {{"broker", QJsonObject{{"version", "0.1.0"}, {"uptime_seconds", uptime}}},
            {"queues", queues}};
}

} // namespace

class tst_QueueColumns : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void fitsA1280PixelWindow();
    void headerMenuShowsAndHidesColumns();
};

void tst_QueueColumns::initTestCase()
{
    QCoreApplication::setOrganizationName("CipherMQ-tests"); // no saved layout of a user's
    QStandardPaths::setTestModeEnabled(true);
    QSettings().remove("layout"); // nor one of an earlier run: the defaults are under test
}

void tst_QueueColumns::fitsA1280PixelWindow()
{
    MainWindow window;
    window.resize(1280, 800);
    window.tabs()->setCurrentIndex(MainWindow::QueuesTab);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    for (int i = 0; i < 3; ++i)
        window.showSnapshot(snapshot(100 + i, 900 + i));
    QTableView *view = window.queuesPage()->view();
    QHeaderView *header = view->horizontalHeader();
    QVERIFY(header->isSectionHidden(QueueTableModel::Limit));
    QVERIFY(header->isSectionHidden(QueueTableModel::Overflow));
    QTRY_VERIFY(header->sectionSize(QueueTableModel::Name) > 100); // sized to the first data
    // The widths the first data gave still hold what the cells show now: resized to their
    // contents again, no column grows (the last one stretches to the table's edge).
    int last = header->count() - 1;
    while (header->isSectionHidden(last))
        --last;
    QList<int> shown(header->count());
    for (int column = 0; column < header->count(); ++column)
        shown[column] = header->sectionSize(column);
    view->resizeColumnsToContents();
    int wanted = header->sectionSizeHint(last);
    for (int column = 0; column < last; ++column) {
        if (header->isSectionHidden(column))
            continue;
        QVERIFY2(shown[column] >= header->sectionSize(column),
                 qPrintable(QStringLiteral("column %1: %2 px shown, %3 px wanted")
                                .arg(column)
                                .arg(shown[column])
                                .arg(header->sectionSize(column))));
        wanted += header->sectionSize(column);
    }
    QVERIFY2(wanted <= view->viewport()->width(),
             qPrintable(QStringLiteral("%1 px wanted, %2 px shown")
                            .arg(wanted)
                            .arg(view->viewport()->width())));
    QCOMPARE(view->horizontalScrollBar()->maximum(), 0);
    qInfo("columns want %d px of the %d px the table shows", wanted, view->viewport()->width());
}

void tst_QueueColumns::headerMenuShowsAndHidesColumns()
{
    QByteArray saved;
    {
        MainWindow window;
        window.show();
        window.showSnapshot(snapshot(100, 5));
        cmq::admingui::TablePage *page = window.queuesPage();
        QHeaderView *header = page->view()->horizontalHeader();
        QCOMPARE(header->contextMenuPolicy(), Qt::CustomContextMenu);
        std::unique_ptr<QMenu> menu(page->columnsMenu());
        const QList<QAction *> actions = menu->actions();
        // Sixteen columns, a separator, "Show all columns".
        QCOMPARE(actions.size(), int(QueueTableModel::ColumnCount) + 2);
        QCOMPARE(actions.at(QueueTableModel::OldestReadyAge)->text(), QStringLiteral("Oldest ready (s)"));
        QVERIFY(actions.at(QueueTableModel::DeadLetter)->toolTip().contains("Dead-letter exchange"));
        QVERIFY(actions.at(QueueTableModel::Ready)->isChecked());
        QVERIFY(!actions.at(QueueTableModel::Overflow)->isChecked());

        actions.at(QueueTableModel::Overflow)->trigger();
        QVERIFY(!header->isSectionHidden(QueueTableModel::Overflow));
        QVERIFY(header->sectionSize(QueueTableModel::Overflow) > 0);
        actions.at(QueueTableModel::Evicted)->trigger();
        QVERIFY(header->isSectionHidden(QueueTableModel::Evicted));
        saved = page->saveHeaderState();

        // The last column shown cannot be hidden: the header would be gone.
        for (int c = 1; c < QueueTableModel::ColumnCount; ++c)
            page->setColumnShown(c, false);
        std::unique_ptr<QMenu> last(page->columnsMenu());
        QVERIFY(!last->actions().at(QueueTableModel::Name)->isEnabled());
        QVERIFY(last->actions().at(QueueTableModel::Ready)->isEnabled());
        last->actions().last()->trigger(); // Show all columns
        QCOMPARE(header->hiddenSectionCount(), 0);
    }
    // A new window with the saved layout: Overflow shown, Evicted hidden, as left.
    MainWindow window;
    QVERIFY(window.queuesPage()->restoreHeaderState(saved));
    QHeaderView *header = window.queuesPage()->view()->horizontalHeader();
    QVERIFY(!header->isSectionHidden(QueueTableModel::Overflow));
    QVERIFY(header->isSectionHidden(QueueTableModel::Evicted));
    QVERIFY(header->isSectionHidden(QueueTableModel::Limit));
}

QTEST_MAIN(tst_QueueColumns)
#include "tst_queuecolumns.moc"
