// Server-side paging end to end (docs/ADMIN-GUI.md, "Large brokers"): a window whose Queues
// pager is set to page from 5 rows, against a real broker with 30 queues, asks for a page (the
// broker answers with queues_page), shows the page bar, sends the filter and a header sort to
// the broker, and selects and opens the detail of a row of the page; the Rate limits tab's
// buckets page the same way, their options sent only while the tab is shown.

#include <QStandardPaths>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"
#include "ui/mainwindow.h"
#include "ui/queuedetaildialog.h"
#include "ui/tablepage.h"

using cmq::admingui::ConnectionOptions;
using cmq::admingui::MainWindow;
using cmq::admingui::QueueDetailDialog;
using cmq::admingui::QueueTableModel;
using cmq::admingui::RateLimitTableModel;
using cmq::admingui::TablePage;
using cmq::test::BrokerProcess;
using cmq::test::certFile;
using cmq::test::freePort;
using cmq::test::TestClient;

namespace {

constexpr int Deadline = 30000;
constexpr int QueueCount = 30;

QString queueName(int i)
{
    return QStringLiteral("receiver_1_pw%1").arg(i, 2, 10, QLatin1Char('0'));
}

} // namespace

class tst_PagedWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void pagesFilterAndSortOnTheBroker();
    void rateLimitsWatchedWhileTheirTabIsShown();
    void rateLimitsPageOnTheBroker();

private:
    ConnectionOptions adminOptions() const;

    BrokerProcess m_broker;
    quint16 m_adminPort = 0;
    std::unique_ptr<TestClient> m_receiver;
};

void tst_PagedWindow::initTestCase()
{
    QCoreApplication::setOrganizationName("CipherMQ-tests");
    QStandardPaths::setTestModeEnabled(true);
    m_adminPort = freePort();
    m_broker.set("admin.enabled", "true");
    m_broker.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(m_adminPort));
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    m_receiver = std::make_unique<TestClient>("receiver_1");
    QVERIFY(m_receiver->connectTo(m_broker.port()));
    for (int i = 0; i < QueueCount; ++i)
        QCOMPARE(m_receiver->request("declare_queue " + queueName(i).toUtf8()), "Queue declared");
}

ConnectionOptions tst_PagedWindow::adminOptions() const
{
    ConnectionOptions o;
    o.host = "localhost";
    o.port = m_adminPort;
    o.caPath = certFile("ca.crt");
    o.certPath = certFile("ops-admin.crt");
    o.keyPath = certFile("ops-admin.key");
    return o;
}

void tst_PagedWindow::cleanupTestCase()
{
    m_receiver.reset();
    QVERIFY(m_broker.terminate());
}

void tst_PagedWindow::pagesFilterAndSortOnTheBroker()
{
    MainWindow window;
    window.queuePager()->setThreshold(5);
    window.session().setWatchIntervalMs(200);
    window.show();
    window.tabs()->setCurrentIndex(MainWindow::QueuesTab);
    window.connectTo(adminOptions());

    // The first whole snapshot turns paging on; the broker's pages follow.
    QTRY_VERIFY_WITH_TIMEOUT(
        window.session().lastSnapshot().contains(QStringLiteral("queues_page")), Deadline);
    QVERIFY(window.queuePager()->isPaged());
    QCOMPARE(window.queuePager()->total(), QueueCount);
    QVERIFY(window.session().watchLine().contains(QStringLiteral("queues.limit=200")));
    TablePage *page = window.queuesPage();
    QTRY_VERIFY_WITH_TIMEOUT(page->pageSummary()->isVisibleTo(page), Deadline);
    QCOMPARE(page->pageSummary()->text(), QStringLiteral("Rows 1–30 of 30 queues"));
    QVERIFY(!page->nextPageButton()->isEnabled());
    // Connections stay whole: only a few.
    QVERIFY(!window.connectionPager()->isPaged());
    QVERIFY(!window.session().lastSnapshot().contains(QStringLiteral("connections_page")));

    // The filter goes to the broker: only the matching queues come back, with the counts.
    page->filter()->setText(QStringLiteral("PW1"));
    QTRY_COMPARE_WITH_TIMEOUT(window.queuePager()->matched(), 10, Deadline);
    QTRY_COMPARE_WITH_TIMEOUT(window.queueModel().rowCount(), 10, Deadline);
    QCOMPARE(page->pageSummary()->text(), QStringLiteral("Rows 1–10 of 10 matching (30 queues)"));
    const QJsonObject info =
        window.session().lastSnapshot().value(QStringLiteral("queues_page")).toObject();
    QCOMPARE(info.value("filter").toString(), QStringLiteral("PW1"));

    // A header click sorts on the broker.
    page->view()->sortByColumn(QueueTableModel::Name, Qt::DescendingOrder);
    QTRY_COMPARE_WITH_TIMEOUT(window.session()
                                  .lastSnapshot()
                                  .value(QStringLiteral("queues_page"))
                                  .toObject()
                                  .value("order")
                                  .toString(),
                              QStringLiteral("desc"), Deadline);
    const QJsonArray rows =
        window.session().lastSnapshot().value(QStringLiteral("queues")).toArray();
    QCOMPARE(rows.first().toObject().value("name").toString(), queueName(19));

    // Rows of the page select and open as before.
    QVERIFY(page->selectKey(queueName(12)));
    QueueDetailDialog *detail = window.openQueueDetail(queueName(12));
    QVERIFY(detail);
    window.session().close();
}

// The watch asks for the rate-limit buckets only while the Rate limits tab is shown; opening
// the tab sends a new watch line, whose immediate snapshot fills it; leaving it drops them again.
void tst_PagedWindow::rateLimitsWatchedWhileTheirTabIsShown()
{
    MainWindow window;
    window.session().setWatchIntervalMs(200);
    window.show();
    window.tabs()->setCurrentIndex(MainWindow::OverviewTab);
    window.connectTo(adminOptions());

    QTRY_VERIFY_WITH_TIMEOUT(window.session().lastSnapshot().contains(QStringLiteral("queues")),
                             Deadline);
    QCOMPARE(window.session().watchLine(),
             QStringLiteral("watch 200 queues,exchanges,bindings,connections,talkers"));
    QVERIFY(!window.session().lastSnapshot().contains(QStringLiteral("ratelimits")));
    QVERIFY(window.session().lastSnapshot().contains(QStringLiteral("talkers")));
    QCOMPARE(window.rateLimitModel().rowCount(), 0);

    window.tabs()->setCurrentIndex(MainWindow::RateLimitsTab);
    QCOMPARE(window.session().watchLine(), QStringLiteral("watch 200")); // every section
    // receiver_1's CN bucket and the IP bucket of 127.0.0.1 (the admin has none).
    QTRY_VERIFY_WITH_TIMEOUT(window.rateLimitModel().rowCount() >= 2, Deadline);
    QVERIFY(window.rateLimitModel().rowOf(QStringLiteral("cn:receiver_1")) >= 0);

    window.tabs()->setCurrentIndex(MainWindow::QueuesTab);
    QTRY_VERIFY_WITH_TIMEOUT(
        !window.session().lastSnapshot().contains(QStringLiteral("ratelimits")), Deadline);
    // The tab keeps its rows until it is opened again (then a fresh snapshot replaces them).
    QVERIFY(window.rateLimitModel().rowOf(QStringLiteral("cn:receiver_1")) >= 0);
    window.session().close();
}

// At 5,000 client CNs the shown Rate limits tab asks for its page of buckets (here from 1 row):
// the filter and a header sort go to the broker; hidden, the watch carries no bucket options.
void tst_PagedWindow::rateLimitsPageOnTheBroker()
{
    MainWindow window;
    window.rateLimitPager()->setThreshold(1);
    window.session().setWatchIntervalMs(200);
    window.show();
    window.tabs()->setCurrentIndex(MainWindow::RateLimitsTab);
    window.connectTo(adminOptions());

    QTRY_VERIFY_WITH_TIMEOUT(
        window.session().lastSnapshot().contains(QStringLiteral("ratelimits_page")), Deadline);
    QVERIFY(window.rateLimitPager()->isPaged());
    QVERIFY(window.session().watchLine().contains(QStringLiteral("ratelimits.limit=200")));
    const qint64 total = window.rateLimitPager()->total();
    QVERIFY(total >= 2); // receiver_1 and 127.0.0.1
    TablePage *page = window.rateLimitsPage();
    QTRY_VERIFY_WITH_TIMEOUT(page->pageSummary()->isVisibleTo(page), Deadline);
    QCOMPARE(page->pageSummary()->text(), QStringLiteral("Rows 1–%1 of %1 buckets").arg(total));

    page->filter()->setText(QStringLiteral("RECEIVER_1"));
    QTRY_COMPARE_WITH_TIMEOUT(window.rateLimitPager()->matched(), 1, Deadline);
    QTRY_COMPARE_WITH_TIMEOUT(window.rateLimitModel().rowCount(), 1, Deadline);
    QVERIFY(window.rateLimitModel().rowOf(QStringLiteral("cn:receiver_1")) >= 0);
    page->filter()->clear();
    QTRY_COMPARE_WITH_TIMEOUT(window.rateLimitPager()->matched(), total, Deadline);

    page->view()->sortByColumn(RateLimitTableModel::Rejected, Qt::DescendingOrder);
    QTRY_COMPARE_WITH_TIMEOUT(window.session()
                                  .lastSnapshot()
                                  .value(QStringLiteral("ratelimits_page"))
                                  .toObject()
                                  .value("sort")
                                  .toString(),
                              QStringLiteral("rejected"), Deadline);

    // Hidden: the broker would refuse bucket options for a watch without them.
    window.tabs()->setCurrentIndex(MainWindow::QueuesTab);
    QVERIFY(!window.session().watchLine().contains(QStringLiteral("ratelimits")));
    QTRY_VERIFY_WITH_TIMEOUT(
        !window.session().lastSnapshot().contains(QStringLiteral("ratelimits_page")), Deadline);
    QVERIFY(window.rateLimitPager()->isPaged()); // and pages again when the tab is shown
    window.tabs()->setCurrentIndex(MainWindow::RateLimitsTab);
    QTRY_VERIFY_WITH_TIMEOUT(
        window.session().lastSnapshot().contains(QStringLiteral("ratelimits_page")), Deadline);
    window.session().close();
}

QTEST_MAIN(tst_PagedWindow)
#include "tst_pagedwindow.moc"
