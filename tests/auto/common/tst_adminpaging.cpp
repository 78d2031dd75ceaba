// The page options of `json`, `watch` (and `talkers`) for the queues, connections, rate-limit
// buckets and talkers (docs/ADMIN-PROTOCOL.md, "Paging"): what each option sets, the defaults, the
// exact error line for each mistake, that the forms without options parse as before, and that
// pagingArguments() writes what the parser reads back.

#include <QTest>

#include "admin/adminrequest.h"

using namespace cmq::admin;

Q_DECLARE_METATYPE(cmq::admin::ListPage)

class tst_AdminPaging : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void options_data();
    void options();
    void talkers_data();
    void talkers();
    void errors_data();
    void errors();
    void unpagedFormsUnchanged();
    void roundTrip();
};

namespace {

ListPage page(QString filter = {}, QString sort = {}, bool descending = false, int offset = 0,
              int limit = DefaultPageRows)
{
    ListPage p;
    p.paged = true;
    p.filter = std::move(filter);
    p.sort = std::move(sort);
    p.descending = descending;
    p.offset = offset;
    p.limit = limit;
    return p;
}

} // namespace

void tst_AdminPaging::options_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("sections");
    QTest::addColumn<ListPage>("queues");
    QTest::addColumn<ListPage>("connections");
    QTest::addColumn<ListPage>("ratelimits");
    const int all = int(AllSections.toInt());
    const int qc = int((Section::Queues | Section::Connections).toInt());
    QTest::newRow("the brief's example")
        << QByteArray("watch 1000 queues,connections queues.filter=orders queues.sort=ready "
                      "queues.order=desc queues.offset=0 queues.limit=200 connections.limit=200")
        << qc << page("orders", "ready", true, 0, 200) << page({}, {}, false, 0, 200) << ListPage();
    QTest::newRow("options without sections")
        << QByteArray("watch 500 queues.offset=400") << all << page({}, {}, false, 400)
        << ListPage() << ListPage();
    QTest::newRow("connections only")
        << QByteArray("watch 500 connections connections.sort=bytes_out connections.order=asc "
                      "connections.filter=10.0.")
        << int(Section::Connections) << ListPage() << page("10.0.", "bytes_out") << ListPage();
    QTest::newRow("limits") << QByteArray("watch 100 queues.limit=1 connections.limit=10000") << all
                            << page({}, {}, false, 0, 1) << page({}, {}, false, 0, MaxPageRows)
                            << ListPage();
    QTest::newRow("offset max") << QByteArray("watch 100 queues.offset=100000000") << all
                                << page({}, {}, false, MaxPageOffset) << ListPage() << ListPage();
    QTest::newRow("unicode filter") << QByteArray("watch 100 queues.filter=صف") << all
                                    << page(QStringLiteral("صف")) << ListPage() << ListPage();
    QTest::newRow("filter with '=' and '.'") << QByteArray("watch 100 queues.filter=a=b.c") << all
                                             << page("a=b.c") << ListPage() << ListPage();
    QTest::newRow("json") << QByteArray("json queues.sort=depth connections.sort=not_after") << all
                          << page({}, "depth") << page({}, "not_after") << ListPage();
    QTest::newRow("queues by counted") << QByteArray("json queues.sort=counted") << all
                                       << page({}, "counted") << ListPage() << ListPage();
    QTest::newRow("ratelimits")
        << QByteArray(
               "watch 1000 ratelimits ratelimits.filter=sender ratelimits.sort=global_rejected "
               "ratelimits.order=desc ratelimits.offset=200 ratelimits.limit=100")
        << int(Section::RateLimits) << ListPage() << ListPage()
        << page("sender", "global_rejected", true, 200, 100);
    QTest::newRow("all three") << QByteArray(
                                      "json queues.limit=5 connections.limit=6 ratelimits.sort=key")
                               << all << page({}, {}, false, 0, 5) << page({}, {}, false, 0, 6)
                               << page({}, "key");
}

void tst_AdminPaging::options()
{
    QFETCH(QByteArray, line);
    QFETCH(int, sections);
    QFETCH(ListPage, queues);
    QFETCH(ListPage, connections);
    QFETCH(ListPage, ratelimits);
    const AdminParseResult r = parseAdminRequest(line);
    QVERIFY2(r.ok, r.errorReply.constData());
    QCOMPARE(int(r.request.sections.toInt()), sections);
    QVERIFY(r.request.paging.queues == queues);
    QVERIFY(r.request.paging.connections == connections);
    QVERIFY(r.request.paging.ratelimits == ratelimits);
    QVERIFY(r.request.paging.isPaged());
}

// The talkers' options (the console's page of the busiest), alone and beside the other lists'.
void tst_AdminPaging::talkers_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<ListPage>("talkers");
    QTest::addColumn<bool>("othersPaged");
    QTest::newRow("the console's page")
        << QByteArray("watch 1000 queues,exchanges,bindings,connections,talkers "
                      "talkers.sort=publish_rate talkers.order=desc talkers.limit=200")
        << page({}, "publish_rate", true, 0, 200) << false;
    QTest::newRow("every option")
        << QByteArray("watch 500 talkers talkers.filter=svc talkers.sort=bytes_out_rate "
                      "talkers.order=asc talkers.offset=400 talkers.limit=50")
        << page("svc", "bytes_out_rate", false, 400, 50) << false;
    QTest::newRow("default sort (cn)")
        << QByteArray("watch 500 talkers.limit=10") << page({}, {}, false, 0, 10) << false;
    QTest::newRow("the talkers command")
        << QByteArray("talkers talkers.sort=publish_rate talkers.order=desc talkers.limit=20")
        << page({}, "publish_rate", true, 0, 20) << false;
    QTest::newRow("json, all four lists")
        << QByteArray("json queues.limit=5 connections.limit=6 ratelimits.sort=key "
                      "talkers.sort=idle_seconds")
        << page({}, "idle_seconds") << true;
}

void tst_AdminPaging::talkers()
{
    QFETCH(QByteArray, line);
    QFETCH(ListPage, talkers);
    QFETCH(bool, othersPaged);
    const AdminParseResult r = parseAdminRequest(line);
    QVERIFY2(r.ok, r.errorReply.constData());
    QVERIFY(r.request.paging.talkers == talkers);
    QVERIFY(r.request.paging.isPaged());
    QCOMPARE(r.request.paging.queues.paged, othersPaged);
    QCOMPARE(r.request.paging.connections.paged, othersPaged);
    QCOMPARE(r.request.paging.ratelimits.paged, othersPaged);
}

void tst_AdminPaging::errors_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QByteArray>("reply");
    const QByteArray list = "Error: Invalid page option '%1': expected queues.<option>=<value>, "
                            "connections.<option>=<value>, ratelimits.<option>=<value> or "
                            "talkers.<option>=<value>";
    QTest::newRow("no list") << QByteArray("watch 100 limit=5")
                             << QByteArray(list).replace("%1", "limit=5");
    QTest::newRow("other list") << QByteArray("watch 100 exchanges.limit=5")
                                << QByteArray(list).replace("%1", "exchanges.limit=5");
    QTest::newRow("unknown option")
        << QByteArray("watch 100 queues.size=5")
        << QByteArray("Error: Invalid page option 'queues.size=5': the options are filter, sort, "
                      "order, offset and limit");
    QTest::newRow("list not watched")
        << QByteArray("watch 100 queues connections.limit=5")
        << QByteArray("Error: Page option 'connections.limit' for a list the watch leaves out");
    QTest::newRow("buckets not watched")
        << QByteArray("watch 100 queues,talkers ratelimits.limit=5")
        << QByteArray("Error: Page option 'ratelimits.limit' for a list the watch leaves out");
    QTest::newRow("repeated, ratelimits")
        << QByteArray("json queues.limit=5 ratelimits.limit=5 ratelimits.limit=6")
        << QByteArray("Error: Repeated page option 'ratelimits.limit'");
    QTest::newRow("bucket sort key")
        << QByteArray("json ratelimits.sort=name")
        << QByteArray("Error: Invalid sort key 'name' for ratelimits: expected one of scope, key, "
                      "connections, connection_limit, idle_seconds, global_tokens, "
                      "global_accepted, global_rejected, publish_tokens, publish_accepted, "
                      "publish_rejected, accepted, rejected");
    QTest::newRow("talkers not watched")
        << QByteArray("watch 100 queues,ratelimits talkers.sort=publish_rate")
        << QByteArray("Error: Page option 'talkers.sort' for a list the watch leaves out");
    QTest::newRow("repeated, talkers")
        << QByteArray("json talkers.order=desc talkers.limit=5 talkers.limit=6")
        << QByteArray("Error: Repeated page option 'talkers.limit'");
    QTest::newRow("talker sort key")
        << QByteArray("json talkers.sort=rate")
        << QByteArray("Error: Invalid sort key 'rate' for talkers: expected one of cn, "
                      "connections, publishes, deliveries, requests, bytes_in, bytes_out, "
                      "idle_seconds, publish_rate, deliver_rate, bytes_in_rate, bytes_out_rate");
    QTest::newRow("talker unknown option")
        << QByteArray("watch 100 talkers.top=5")
        << QByteArray("Error: Invalid page option 'talkers.top=5': the options are filter, sort, "
                      "order, offset and limit");
    QTest::newRow("talkers command, another list")
        << QByteArray("talkers queues.limit=5")
        << QByteArray("Error: Page option 'queues.limit' for a list the watch leaves out");
    QTest::newRow("talkers command, a word")
        << QByteArray("talkers busiest") << QByteArray("Error: Too many arguments for 'talkers'");
    QTest::newRow("repeated") << QByteArray("watch 100 queues.limit=5 queues.limit=6")
                              << QByteArray("Error: Repeated page option 'queues.limit'");
    QTest::newRow("sort key")
        << QByteArray("watch 100 queues.sort=speed")
        << QByteArray("Error: Invalid sort key 'speed' for queues: expected one of " +
                      queueSortKeys().join(QStringLiteral(", ")).toUtf8());
    QTest::newRow("connection sort key")
        << QByteArray("json connections.sort=ready")
        << QByteArray("Error: Invalid sort key 'ready' for connections: expected one of id, "
                      "listener, cn, address, connected_at, requests, messages_in, messages_out, "
                      "bytes_in, bytes_out, not_after");
    QTest::newRow("order") << QByteArray("watch 100 queues.order=up")
                           << QByteArray("Error: Invalid order 'up': expected asc or desc");
    const QByteArray offset = "Error: Invalid offset: expected a number from 0 to 100000000";
    QTest::newRow("offset text") << QByteArray("watch 100 queues.offset=x") << offset;
    QTest::newRow("offset negative") << QByteArray("watch 100 queues.offset=-1") << offset;
    QTest::newRow("offset over") << QByteArray("watch 100 queues.offset=100000001") << offset;
    const QByteArray limit = "Error: Invalid limit: expected a number from 1 to 10000";
    QTest::newRow("limit 0") << QByteArray("watch 100 connections.limit=0") << limit;
    QTest::newRow("limit over") << QByteArray("watch 100 connections.limit=10001") << limit;
    QTest::newRow("limit empty") << QByteArray("watch 100 connections.limit=") << limit;
    const QByteArray filter = "Error: Invalid filter: expected 1 to 255 bytes";
    QTest::newRow("filter empty") << QByteArray("watch 100 queues.filter=") << filter;
    QTest::newRow("filter long") << QByteArray("watch 100 queues.filter=" + QByteArray(256, 'a'))
                                 << filter;
    QTest::newRow("word after options") << QByteArray("watch 100 queues queues.limit=5 x")
                                        << QByteArray("Error: Too many arguments for 'watch'");
    QTest::newRow("json word") << QByteArray("json queues")
                               << QByteArray("Error: Too many arguments for 'json'");
}

void tst_AdminPaging::errors()
{
    QFETCH(QByteArray, line);
    QFETCH(QByteArray, reply);
    const AdminParseResult r = parseAdminRequest(line);
    QVERIFY(!r.ok);
    QCOMPARE(r.errorReply, reply);
}

void tst_AdminPaging::unpagedFormsUnchanged()
{
    for (const char *line : {"json", "watch 1000", "watch 1000 queues,connections",
                             "watch 1000 ratelimits", "watch 1000 talkers"}) {
        const AdminParseResult r = parseAdminRequest(line);
        QVERIFY2(r.ok, line);
        QVERIFY2(!r.request.paging.isPaged(), line);
        QVERIFY(r.request.paging == SnapshotPaging());
    }
    QCOMPARE(pagingArguments(SnapshotPaging()), QString());
}

void tst_AdminPaging::roundTrip()
{
    SnapshotPaging paging;
    paging.queues = page("ord", "oldest_ready_age_ms", true, 400, 50);
    paging.connections = page({}, {}, false, 0, DefaultPageRows);
    paging.ratelimits = page("10.0.", "publish_rejected", true, 0, 100);
    paging.talkers = page("svc-", "publish_rate", true, 200, 200);
    const QString args = pagingArguments(paging);
    QCOMPARE(args, QStringLiteral("queues.filter=ord queues.sort=oldest_ready_age_ms "
                                  "queues.order=desc queues.offset=400 queues.limit=50 "
                                  "connections.limit=200 ratelimits.filter=10.0. "
                                  "ratelimits.sort=publish_rejected ratelimits.order=desc "
                                  "ratelimits.limit=100 talkers.filter=svc- "
                                  "talkers.sort=publish_rate talkers.order=desc "
                                  "talkers.offset=200 talkers.limit=200"));
    const AdminParseResult r = parseAdminRequest(("watch 1000 " + args).toUtf8());
    QVERIFY2(r.ok, r.errorReply.constData());
    QVERIFY(r.request.paging == paging);
}

QTEST_APPLESS_MAIN(tst_AdminPaging)
#include "tst_adminpaging.moc"
