// The console's choice of page (ListPager, docs/ADMIN-GUI.md "Responsiveness"): a small list
// stays whole; a large one turns paging on in the view's sort and filter, pages forward and
// back, sends filter and header sort to the broker (columns it cannot sort stay local), moves
// back from past the end, and turns paging off again when the list shrinks. Also the watch
// line AdminSession sends with those pages, and the Talkers tab's pager (every column sorted
// on the broker, its rates included).

#include <QJsonArray>
#include <QSignalSpy>
#include <QtTest>

#include "models/adminsession.h"
#include "models/connectiontablemodel.h"
#include "models/listpager.h"
#include "models/queuetablemodel.h"
#include "models/ratelimittablemodel.h"
#include "models/talkertablemodel.h"

using namespace cmq::admingui;

namespace {

QJsonObject whole(int rows)
{
    QJsonArray queues;
    for (int i = 0; i < rows; ++i)
        queues.append(QJsonObject{{"name", QStringLiteral("q%1").arg(i)}});
    return {{"queues", queues}};
}

QJsonObject paged(int offset, int rows, qint64 matched, qint64 total)
{
    QJsonObject snapshot = whole(rows);
    snapshot.insert("queues_page", QJsonObject{{"offset", offset},
                                               {"limit", ListPager::PageRows},
                                               {"matched", matched},
                                               {"total", total},
                                               {"sort", "name"},
                                               {"order", "asc"},
                                               {"filter", ""}});
    return snapshot;
}

} // namespace

class tst_ListPager : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The summaries' thousands separators are the locale's.
    void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }
    void smallListStaysWhole();
    void largeListPages();
    void filterAndSortGoToTheBroker();
    void backFromPastTheEnd();
    void rateLimitBuckets();
    void talkers();
    void watchLine();
};

void tst_ListPager::smallListStaysWhole()
{
    std::unique_ptr<ListPager> pager(ListPager::forQueues());
    QSignalSpy requests(pager.get(), &ListPager::requestChanged);
    pager->followSnapshot(whole(ListPager::PagingThreshold - 1));
    QVERIFY(!pager->isPaged());
    QCOMPARE(requests.size(), 0);
    QCOMPARE(pager->summary(), QString());
    // A header click or a filter changes nothing while the list comes whole.
    pager->setSort(QueueTableModel::Ready, Qt::DescendingOrder);
    pager->setFilter(QStringLiteral("orders"));
    QCOMPARE(requests.size(), 0);
    QVERIFY(!pager->request().paged);
    // A snapshot without the list (a watch of other sections) is not a list of 0.
    pager->followSnapshot(QJsonObject{{"talkers", QJsonArray()}});
    QVERIFY(!pager->isPaged());
}

void tst_ListPager::largeListPages()
{
    std::unique_ptr<ListPager> pager(ListPager::forQueues());
    pager->setSort(QueueTableModel::Ready, Qt::DescendingOrder); // the view's order
    QSignalSpy requests(pager.get(), &ListPager::requestChanged);
    pager->followSnapshot(whole(ListPager::PagingThreshold));
    QVERIFY(pager->isPaged());
    QCOMPARE(requests.size(), 1);
    QCOMPARE(pager->request().sort, QStringLiteral("ready"));
    QVERIFY(pager->request().descending);
    QCOMPARE(pager->request().offset, 0);
    QCOMPARE(pager->request().limit, ListPager::PageRows);

    pager->followSnapshot(paged(0, 200, 50000, 50000));
    QCOMPARE(pager->summary(), QStringLiteral("Rows 1–200 of 50,000 queues"));
    QVERIFY(!pager->hasPrevious());
    QVERIFY(pager->hasNext());
    pager->nextPage();
    QCOMPARE(pager->request().offset, 200);
    QCOMPARE(requests.size(), 2);
    // Until the broker answers, the summary tells what is shown.
    QCOMPARE(pager->summary(), QStringLiteral("Rows 1–200 of 50,000 queues"));
    pager->followSnapshot(paged(200, 200, 50000, 50000));
    QCOMPARE(pager->summary(), QStringLiteral("Rows 201–400 of 50,000 queues"));
    pager->previousPage();
    QCOMPARE(pager->request().offset, 0);
    pager->previousPage(); // already first: nothing to ask
    QCOMPARE(requests.size(), 3);

    // The broker's list shrank below half the threshold: whole again.
    constexpr int Shrunk = ListPager::PagingThreshold / 2 - 100;
    pager->followSnapshot(paged(0, 200, Shrunk, Shrunk));
    QVERIFY(!pager->isPaged());
    QCOMPARE(requests.size(), 4);
    QVERIFY(!pager->request().paged);
}

void tst_ListPager::filterAndSortGoToTheBroker()
{
    std::unique_ptr<ListPager> pager(ListPager::forQueues());
    pager->followSnapshot(whole(ListPager::PagingThreshold));
    pager->followSnapshot(paged(0, 200, 50000, 50000));
    pager->nextPage();
    QSignalSpy requests(pager.get(), &ListPager::requestChanged);
    // One word goes to the broker; a new filter starts at the first page.
    pager->setFilter(QStringLiteral("  orders  eu "));
    QCOMPARE(requests.size(), 1);
    QCOMPARE(pager->request().filter, QStringLiteral("orders"));
    QCOMPARE(pager->request().offset, 0);
    pager->setFilter(QStringLiteral("orders"));
    QCOMPARE(requests.size(), 1); // the same word: nothing new to ask
    pager->followSnapshot(paged(0, 200, 1234, 50000));
    QCOMPARE(pager->summary(), QStringLiteral("Rows 1–200 of 1,234 matching (50,000 queues)"));

    pager->setSort(QueueTableModel::OldestReadyAge, Qt::DescendingOrder);
    QCOMPARE(requests.size(), 2);
    QCOMPARE(pager->request().sort, QStringLiteral("oldest_ready_age_ms"));
    QVERIFY(pager->request().descending);
    // Rates are the console's own: the page is sorted here, the broker keeps its order.
    QVERIFY(!pager->sortsOnBroker(QueueTableModel::PublishRate));
    pager->setSort(QueueTableModel::PublishRate, Qt::AscendingOrder);
    QCOMPARE(requests.size(), 2);
    QCOMPARE(pager->request().sort, QStringLiteral("oldest_ready_age_ms"));

    std::unique_ptr<ListPager> connections(ListPager::forConnections());
    QVERIFY(connections->sortsOnBroker(0));
    QVERIFY(!connections->sortsOnBroker(ConnectionTableModel::Roles));
}

void tst_ListPager::backFromPastTheEnd()
{
    std::unique_ptr<ListPager> pager(ListPager::forQueues());
    pager->followSnapshot(whole(ListPager::PagingThreshold));
    pager->followSnapshot(paged(0, 200, 5000, 5000));
    for (int i = 0; i < 24; ++i)
        pager->nextPage();
    QCOMPARE(pager->request().offset, 4800);
    pager->nextPage(); // 4800 + 200 is the end
    QCOMPARE(pager->request().offset, 4800);
    QSignalSpy requests(pager.get(), &ListPager::requestChanged);
    // Queues were deleted: the page asked for is empty; the last page instead.
    pager->followSnapshot(paged(4800, 0, 4500, 4500));
    QCOMPARE(pager->summary(), QStringLiteral("No rows here: 4,500 match (4,500 queues)"));
    QCOMPARE(requests.size(), 1);
    QCOMPARE(pager->request().offset, 4400);
}

// The buckets are inside the "ratelimits" object; their page is a top-level "ratelimits_page".
void tst_ListPager::rateLimitBuckets()
{
    std::unique_ptr<ListPager> pager(ListPager::forRateLimits());
    const auto buckets = [](int rows) {
        QJsonArray list;
        for (int i = 0; i < rows; ++i)
            list.append(QJsonObject{{"scope", "cn"}, {"key", QStringLiteral("c%1").arg(i)}});
        return QJsonObject{{"ratelimits", QJsonObject{{"tracked", rows}, {"buckets", list}}}};
    };
    pager->followSnapshot(buckets(ListPager::PagingThreshold - 1));
    QVERIFY(!pager->isPaged());
    pager->setSort(RateLimitTableModel::Rejected, Qt::DescendingOrder);
    // A snapshot of a hidden tab (no "ratelimits") leaves the pager alone.
    pager->followSnapshot(QJsonObject{{"queues", QJsonArray()}});
    QVERIFY(!pager->isPaged());
    pager->followSnapshot(buckets(5000));
    QVERIFY(pager->isPaged());
    QCOMPARE(pager->request().sort, QStringLiteral("rejected"));
    QVERIFY(pager->request().descending);
    QJsonObject page = buckets(200);
    page.insert("ratelimits_page", QJsonObject{{"offset", 0},
                                               {"limit", 200},
                                               {"matched", 5000},
                                               {"total", 5000},
                                               {"sort", "rejected"},
                                               {"order", "desc"},
                                               {"filter", ""}});
    pager->followSnapshot(page);
    QCOMPARE(pager->summary(), QStringLiteral("Rows 1–200 of 5,000 buckets"));
    QVERIFY(pager->hasNext());
    // The configured rates are sorted on the page only.
    QVERIFY(!pager->sortsOnBroker(RateLimitTableModel::GlobalRate));
    QVERIFY(pager->sortsOnBroker(RateLimitTableModel::Key));
}

// The talkers page by the broker's recent rates: a page by totals would hide a new flooder.
void tst_ListPager::talkers()
{
    std::unique_ptr<ListPager> pager(ListPager::forTalkers());
    pager->setSort(TalkerTableModel::PublishRate, Qt::DescendingOrder); // the tab's order
    const auto talkers = [](int rows) {
        QJsonArray list;
        for (int i = 0; i < rows; ++i)
            list.append(QJsonObject{{"cn", QStringLiteral("svc-%1").arg(i)}});
        return QJsonObject{{"talkers", list}};
    };
    pager->followSnapshot(talkers(ListPager::PagingThreshold));
    QVERIFY(pager->isPaged());
    QCOMPARE(pager->request().sort, QStringLiteral("publish_rate"));
    QVERIFY(pager->request().descending);
    QCOMPARE(pager->request().limit, ListPager::PageRows);
    for (int column = 0; column < TalkerTableModel::ColumnCount; ++column)
        QVERIFY2(pager->sortsOnBroker(column), qPrintable(QString::number(column)));
    pager->setSort(TalkerTableModel::BytesOutRate, Qt::AscendingOrder);
    QCOMPARE(pager->request().sort, QStringLiteral("bytes_out_rate"));
    QJsonObject page = talkers(200);
    page.insert("talkers_page", QJsonObject{{"offset", 0},
                                            {"limit", 200},
                                            {"matched", 5000},
                                            {"total", 5000},
                                            {"sort", "bytes_out_rate"},
                                            {"order", "asc"},
                                            {"filter", ""}});
    pager->followSnapshot(page);
    QCOMPARE(pager->summary(), QStringLiteral("Rows 1–200 of 5,000 identities"));
    // What the console asks for, the broker's parser takes.
    cmq::admin::SnapshotPaging paging;
    paging.talkers = pager->request();
    const cmq::admin::AdminParseResult parsed = cmq::admin::parseAdminRequest(
        ("watch 1000 " + cmq::admin::pagingArguments(paging)).toUtf8());
    QVERIFY2(parsed.ok, parsed.errorReply.constData());
    QCOMPARE(parsed.request.paging, paging);
}

void tst_ListPager::watchLine()
{
    AdminSession session;
    session.setWatchIntervalMs(1000);
    QCOMPARE(session.watchLine(), QStringLiteral("watch 1000")); // unpaged: as before
    cmq::admin::SnapshotPaging paging;
    paging.queues.paged = true;
    paging.queues.sort = QStringLiteral("ready");
    paging.queues.descending = true;
    paging.queues.offset = 400;
    paging.connections.paged = true;
    session.setPaging(paging); // not connected: nothing is sent
    QCOMPARE(session.watchLine(),
             QStringLiteral("watch 1000 queues.sort=ready queues.order=desc queues.offset=400 "
                            "queues.limit=200 connections.limit=200"));
    // What the console sends, the broker's parser takes.
    QVERIFY(cmq::admin::parseAdminRequest(session.watchLine().toUtf8()).ok);

    // The sections the shown views need go before the page options; all of them: no word.
    using cmq::admin::Section;
    session.setSections(Section::Queues | Section::Connections | Section::Talkers);
    QCOMPARE(session.watchLine(),
             QStringLiteral("watch 1000 queues,connections,talkers queues.sort=ready "
                            "queues.order=desc queues.offset=400 queues.limit=200 "
                            "connections.limit=200"));
    const cmq::admin::AdminParseResult parsed =
        cmq::admin::parseAdminRequest(session.watchLine().toUtf8());
    QVERIFY(parsed.ok);
    QCOMPARE(parsed.request.sections, Section::Queues | Section::Connections | Section::Talkers);
    QCOMPARE(parsed.request.paging, paging);

    // The buckets' page goes out only while the watch carries them.
    paging.ratelimits.paged = true;
    paging.ratelimits.sort = QStringLiteral("rejected");
    session.setPaging(paging);
    QVERIFY(!session.watchLine().contains(QStringLiteral("ratelimits")));
    session.setSections(Section::Queues | Section::Connections | Section::RateLimits);
    QCOMPARE(session.watchLine(),
             QStringLiteral("watch 1000 queues,connections,ratelimits queues.sort=ready "
                            "queues.order=desc queues.offset=400 queues.limit=200 "
                            "connections.limit=200 ratelimits.sort=rejected "
                            "ratelimits.limit=200"));
    QVERIFY(cmq::admin::parseAdminRequest(session.watchLine().toUtf8()).ok);
    // Likewise the talkers' page.
    paging.talkers.paged = true;
    session.setPaging(paging);
    QVERIFY(!session.watchLine().contains(QStringLiteral("talkers")));
    session.setSections(Section::Talkers);
    QCOMPARE(session.watchLine(), QStringLiteral("watch 1000 talkers talkers.limit=200"));
    QVERIFY(cmq::admin::parseAdminRequest(session.watchLine().toUtf8()).ok);
    session.setSections(cmq::admin::AllSections);
    session.setPaging({});
    QCOMPARE(session.watchLine(), QStringLiteral("watch 1000"));
}

QTEST_MAIN(tst_ListPager)
#include "tst_listpager.moc"
