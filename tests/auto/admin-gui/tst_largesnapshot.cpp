// Responsiveness with a large broker: synthetic watch snapshots of 5,000 queues and 1,000
// connections sent whole, and of 50,000 queues and 5,000 connections sent as the broker pages
// them for the console (a page of 200 of each plus totals, the page's bindings, a page of 200
// of the 5,000 rate-limit buckets while their tab is shown, and a page of the 200 busiest of
// the 5,000 talkers with the broker's rates; one row sends the talkers whole, as before they
// were paged), in which every queue's counts change every time (the worst case for the
// tables), go through the real window, shown offscreen, with the Queues table sorted by a
// changing column, a selection and a queue detail window open. Measures, per snapshot, the JSON
// parse of the `Snapshot:` line (as it used to run, on the GUI thread, and as it runs now, handed
// to the SnapshotParser's worker thread) and the window's update including the repaint; prints the
// medians (the figures in docs/ADMIN-GUI.md). It checks that the updates were applied in place,
// not how fast: a timing assertion fails whenever the machine is loaded (CI shares 2 cores),
// so the figures are printed for the record and compared by whoever changes the window.

#include <algorithm>

#include <time.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QtTest>

#include "admin/snapshotparser.h"
#include "ui/mainwindow.h"
#include "ui/queuedetaildialog.h"
#include "ui/tablepage.h"
#include "ui/talkerspage.h"

using cmq::admingui::MainWindow;
using cmq::admingui::QueueTableModel;

namespace {

constexpr int Rounds = 15;

// How large the broker is, and how many rows of each list its snapshot carries (0: whole).
struct Scale
{
    int queues;
    int connections;
    int pageRows;
    int clients;               // client CNs: one rate-limit bucket and one talker each
    bool talkersWhole = false; // the talkers sent whole however many (before they were paged)
    int shownQueues() const { return pageRows ? pageRows : queues; }
    int shownConnections() const { return pageRows ? pageRows : connections; }
    // The console asks for a page of buckets from ListPager::PagingThreshold on.
    bool bucketsPaged() const
    {
        return pageRows && clients >= cmq::admingui::ListPager::PagingThreshold;
    }
    int shownBuckets() const { return bucketsPaged() ? pageRows : clients; }
    bool talkersPaged() const { return bucketsPaged() && !talkersWhole; }
    int shownTalkers() const { return talkersPaged() ? pageRows : clients; }
};

QString queueName(int i)
{
    return QStringLiteral("tenant_%1_queue").arg(i, 5, 10, QLatin1Char('0'));
}

QJsonObject pageInfo(int rows, int total)
{
    return {{"offset", 0},    {"limit", rows},  {"matched", total}, {"total", total},
            {"sort", "name"}, {"order", "asc"}, {"filter", ""}};
}

QJsonObject certificate(int i)
{
    return {{"subject", QStringLiteral("CN=svc-%1,O=CipherMQ Tests").arg(i)},
            {"issuer", "CN=CipherMQ Test CA"},
            {"serial", QStringLiteral("4a:1f:%1").arg(i, 4, 16, QLatin1Char('0'))},
            {"not_before", "2025-01-01T00:00:00.000Z"},
            {"not_after", "2030-01-01T00:00:00.000Z"}};
}

// The snapshot the broker sends for the window's watch: only the sections it asks for.
QJsonObject snapshot(int sequence, const Scale &scale, cmq::admin::Sections sections)
{
    const int queueCount = scale.queues;
    const int connectionCount = scale.connections;
    QJsonArray queues, bindings, connections, buckets, talkers;
    for (int i = 0; i < scale.shownQueues(); ++i) {
        const qint64 published = qint64(i) * 10 + sequence * (i % 50);
        queues.append(QJsonObject{{"name", queueName(i)},
                                  {"owner", QStringLiteral("svc-%1").arg(i % connectionCount)},
                                  {"max_length", 10000},
                                  {"overflow", "drop-head"},
                                  {"ready", (i * 7 + sequence * 13) % 1000},
                                  {"unacked", (i + sequence) % 17},
                                  {"inflight", 0},
                                  {"consumers", 1},
                                  {"bytes", 4096 * (i % 100)},
                                  {"published", published},
                                  {"delivered", published - i % 10},
                                  {"acknowledged", published - i % 20},
                                  {"redelivered", 0},
                                  {"evicted", 0}});
        bindings.append(QJsonObject{{"exchange", QStringLiteral("exchange_%1").arg(i % 50)},
                                    {"routing_key", queueName(i) + "_key"},
                                    {"queue", queueName(i)}});
    }
    for (int i = 0; i < scale.shownTalkers(); ++i) {
        QJsonObject talker{
            {"cn", QStringLiteral("svc-%1").arg(i)}, {"connections", 1},
            {"publishes", 50 + sequence * 2},        {"deliveries", 60 + sequence * 3},
            {"requests", 100 + sequence * 5},        {"bytes_in", 4096 + sequence * 100},
            {"bytes_out", 8192 + sequence * 150},    {"idle_seconds", 0.0}};
        if (scale.talkersPaged()) { // a page carries the broker's rates
            talker.insert("publish_rate", 2.0);
            talker.insert("deliver_rate", 3.0);
            talker.insert("bytes_in_rate", 100.0);
            talker.insert("bytes_out_rate", 150.0);
        }
        talkers.append(talker);
    }
    for (int i = 0; i < scale.shownBuckets(); ++i) {
        const QJsonObject bucket{{"tokens", 150.0 - (i + sequence) % 100},
                                 {"rate", 100},
                                 {"burst", 200},
                                 {"accepted", 100 + sequence},
                                 {"rejected", 0}};
        buckets.append(QJsonObject{{"scope", "cn"},
                                   {"key", QStringLiteral("svc-%1").arg(i)},
                                   {"connections", 1},
                                   {"connection_limit", 20},
                                   {"global", bucket},
                                   {"publish", bucket}});
    }
    for (int i = 0; i < scale.shownConnections(); ++i) {
        QJsonArray consuming;
        for (int q = i; q < queueCount; q += connectionCount)
            consuming.append(queueName(q));
        connections.append(QJsonObject{{"id", i + 1},
                                       {"listener", "data"},
                                       {"cn", QStringLiteral("svc-%1").arg(i)},
                                       {"roles", QJsonArray{"sender", "receiver"}},
                                       {"address", "10.0.0.1"},
                                       {"port", 40000 + i},
                                       {"connected_at", "2025-01-31T10:00:00.123Z"},
                                       {"certificate", certificate(i)},
                                       {"requests", 100 + sequence * 5},
                                       {"messages_in", 50 + sequence * 2},
                                       {"messages_out", 60 + sequence * 3},
                                       {"bytes_in", 4096 + sequence * 100},
                                       {"bytes_out", 8192 + sequence * 150},
                                       {"consumers", consuming},
                                       {"prefetch", 256},
                                       {"unacked", (i + sequence) % 17},
                                       {"slow", false}});
    }
    QJsonArray exchanges;
    for (int i = 0; i < 50; ++i)
        exchanges.append(QJsonObject{{"name", QStringLiteral("exchange_%1").arg(i)},
                                     {"type", "direct"},
                                     {"creator", "svc-0"},
                                     {"bindings", queueCount / 50}});
    QJsonObject out{
        {"version", 1},
        {"sequence", sequence},
        {"broker", QJsonObject{{"version", "0.1.0"}, {"uptime_seconds", 100.0 + sequence}}},
        {"rates", QJsonObject{{"messages_published", 900.0 + sequence},
                              {"messages_delivered", 880.0},
                              {"messages_acknowledged", 870.0}}},
        {"totals", QJsonObject{{"connections", connectionCount},
                               {"queues", queueCount},
                               {"consumers", queueCount},
                               {"messages_ready", 2500000},
                               {"messages_unacked", 40000}}},
        {"queues", queues},
        {"exchanges", exchanges},
        {"bindings", bindings},
        {"connections", connections},
        {"ratelimits",
         QJsonObject{{"enabled", true}, {"tracked", scale.clients}, {"buckets", buckets}}},
        {"talkers", talkers}};
    if (!(sections & cmq::admin::Section::RateLimits))
        out.remove("ratelimits");
    if (!(sections & cmq::admin::Section::Talkers))
        out.remove("talkers");
    if (scale.pageRows) {
        out.insert("queues_page", pageInfo(scale.pageRows, queueCount));
        out.insert("connections_page", pageInfo(scale.pageRows, connectionCount));
    }
    if (scale.bucketsPaged() && (sections & cmq::admin::Section::RateLimits)) {
        QJsonObject page = pageInfo(scale.pageRows, scale.clients);
        page.insert("sort", "scope");
        out.insert("ratelimits_page", page);
    }
    if (scale.talkersPaged() && (sections & cmq::admin::Section::Talkers)) {
        QJsonObject page = pageInfo(scale.pageRows, scale.clients);
        page.insert("sort", "publish_rate");
        page.insert("order", "desc");
        out.insert("talkers_page", page);
    }
    return out;
}

// CPU time of the calling thread: what the GUI thread spent, however loaded the machine is
// (the wall-clock figures grow with the load; these do not).
double threadCpuMs()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double median(QList<double> values)
{
    std::sort(values.begin(), values.end());
    return values.isEmpty() ? 0 : values[values.size() / 2];
}

} // namespace

class tst_LargeSnapshot : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void updateTime_data();
    void updateTime();
};

void tst_LargeSnapshot::updateTime_data()
{
    QTest::addColumn<int>("tab");
    QTest::addColumn<int>("queues");
    QTest::addColumn<int>("connections");
    QTest::addColumn<int>("pageRows");
    QTest::addColumn<int>("clients");
    QTest::addColumn<bool>("talkersWhole");
    const std::pair<const char *, int> tabs[] = {{"Queues tab", MainWindow::QueuesTab},
                                                 {"Connections tab", MainWindow::ConnectionsTab},
                                                 {"Overview tab", MainWindow::OverviewTab}};
    for (const auto &[name, tab] : tabs)
        QTest::addRow("whole 5k/1k, %s", name) << tab << 5000 << 1000 << 0 << 999 << false;
    // The largest lists the console still takes whole: one row short of paging in every list.
    const std::pair<const char *, int> wholeTabs[] = {
        {"Queues tab", MainWindow::QueuesTab},
        {"Connections tab", MainWindow::ConnectionsTab},
        {"Talkers tab", MainWindow::TalkersTab}};
    constexpr int Largest = cmq::admingui::ListPager::PagingThreshold - 1;
    for (const auto &[name, tab] : wholeTabs)
        QTest::addRow("whole, just under paging, %s", name)
            << tab << Largest << Largest << 0 << Largest << false;
    // Every tab: the rate-limit buckets come only while theirs is shown, the talkers always.
    const std::pair<const char *, int> allTabs[] = {{"Overview tab", MainWindow::OverviewTab},
                                                    {"Queues tab", MainWindow::QueuesTab},
                                                    {"Exchanges tab", MainWindow::ExchangesTab},
                                                    {"Connections tab", MainWindow::ConnectionsTab},
                                                    {"Rate limits tab", MainWindow::RateLimitsTab},
                                                    {"Audit tab", MainWindow::AuditTab},
                                                    {"Talkers tab", MainWindow::TalkersTab}};
    for (const auto &[name, tab] : allTabs)
        QTest::addRow("paged 50k/5k, %s", name) << tab << 50000 << 5000 << 200 << 5000 << false;
    // The talkers whole, as before their page existed: what the page saves.
    QTest::addRow("paged 50k/5k, talkers whole, Talkers tab")
        << int(MainWindow::TalkersTab) << 50000 << 5000 << 200 << 5000 << true;
    // The same pages with 200 client CNs in the rate limits and talkers (not paged): what the
    // paged lists cost on their own.
    QTest::addRow("paged 50k/5k, 200 CNs, Queues tab")
        << int(MainWindow::QueuesTab) << 50000 << 5000 << 200 << 200 << false;
}

void tst_LargeSnapshot::updateTime()
{
    QFETCH(int, tab);
    QFETCH(int, queues);
    QFETCH(int, connections);
    QFETCH(int, pageRows);
    QFETCH(int, clients);
    QFETCH(bool, talkersWhole);
    const Scale scale{queues, connections, pageRows, clients, talkersWhole};
    // In the page (of the first 200 by name) and consumed by a connection in its page too.
    const int selectedIndex = pageRows ? 123 : 567;
    const QString selected = queueName(selectedIndex);
    MainWindow window;
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.tabs()->setCurrentIndex(tab);

    // The stream's lines, serialized up front so the loop times only the console's work.
    QList<QByteArray> lines;
    const cmq::admin::Sections sections = window.session().sections();
    QCOMPARE(sections, MainWindow::sectionsFor(tab));
    for (int sequence = 1; sequence <= Rounds + 1; ++sequence)
        lines.append(
            QJsonDocument(snapshot(sequence, scale, sections)).toJson(QJsonDocument::Compact));

    QElapsedTimer timer;
    timer.start();
    window.showSnapshot(QJsonDocument::fromJson(lines.first()).object());
    QApplication::processEvents();
    const double firstMs = timer.nsecsElapsed() / 1e6;
    QCOMPARE(window.queueModel().rowCount(), scale.shownQueues());
    QCOMPARE(window.connectionModel().rowCount(), scale.shownConnections());
    // The tabs page from the broker's page objects on (a real session then asks for pages).
    QCOMPARE(window.queuePager()->isPaged(), queues >= cmq::admingui::ListPager::PagingThreshold);
    QCOMPARE(window.connectionPager()->total(), connections);
    if (sections & cmq::admin::Section::RateLimits) {
        QCOMPARE(window.rateLimitModel().rowCount(), scale.shownBuckets());
        QCOMPARE(window.rateLimitPager()->isPaged(),
                 clients >= cmq::admingui::ListPager::PagingThreshold);
        QCOMPARE(window.rateLimitPager()->total(), clients);
    }
    QCOMPARE(window.talkerPager()->isPaged(),
             pageRows && clients >= cmq::admingui::ListPager::PagingThreshold);
    QCOMPARE(window.talkerPager()->total(), clients);
    if (tab == MainWindow::TalkersTab)
        QCOMPARE(window.talkersPage()->model().rowCount(), scale.shownTalkers());

    // Sorted by a column that changes every snapshot, one row selected, one detail open.
    window.queuesPage()->view()->sortByColumn(QueueTableModel::Ready, Qt::DescendingOrder);
    QVERIFY(window.queuesPage()->selectKey(selected));
    const auto *detail = window.openQueueDetail(selected);
    window.activateWindow();
    QApplication::processEvents();

    cmq::admin::SnapshotParser parser;
    QSignalSpy parsed(&parser, &cmq::admin::SnapshotParser::parsed);
    QList<double> parseMs, handOffMs, updateMs, guiBeforeMs, guiAfterMs, updateCpuMs;
    for (int round = 1; round <= Rounds; ++round) {
        timer.restart();
        const QJsonObject onGuiThread = QJsonDocument::fromJson(lines[round]).object();
        parseMs.append(timer.nsecsElapsed() / 1e6);
        timer.restart();
        parser.parse(lines[round]); // what AdminClient does now with a Snapshot: line
        handOffMs.append(timer.nsecsElapsed() / 1e6);
        QVERIFY(parsed.wait(30000));
        const QJsonObject object = parsed.takeFirst().at(0).toJsonObject();
        QCOMPARE(object, onGuiThread);
        timer.restart();
        const double cpuBefore = threadCpuMs();
        window.showSnapshot(object);
        QApplication::processEvents(); // layout and repaint of what changed
        updateMs.append(timer.nsecsElapsed() / 1e6);
        updateCpuMs.append(threadCpuMs() - cpuBefore);
        guiBeforeMs.append(parseMs.last() + updateMs.last());
        guiAfterMs.append(handOffMs.last() + updateMs.last());
    }
    const double worst = *std::max_element(updateMs.cbegin(), updateMs.cend());
    qInfo("%d queues, %d connections, %s: snapshot line %.1f MB; first snapshot %.0f ms; then "
          "per snapshot: JSON parse %.1f ms, window update %.1f ms median, %.1f ms max",
          queues, connections, QTest::currentDataTag(), lines.last().size() / 1e6, firstMs,
          median(parseMs), median(updateMs), worst);
    qInfo("%s: GUI thread per snapshot, median: %.1f ms parsing there (before), %.1f ms with the "
          "parse on the worker thread (after; hand-off %.2f ms)",
          QTest::currentDataTag(), median(guiBeforeMs), median(guiAfterMs), median(handOffMs));
    qInfo("%s: window update, GUI thread CPU time: %.1f ms median, %.1f ms max",
          QTest::currentDataTag(), median(updateCpuMs),
          *std::max_element(updateCpuMs.cbegin(), updateCpuMs.cend()));

    // The live updates were applied, in place.
    const QJsonObject last = QJsonDocument::fromJson(lines[Rounds]).object();
    const int row = window.queueModel().rowOf(selected);
    QCOMPARE(window.queueModel().index(row, QueueTableModel::Ready).data().toString(),
             QString::number(last["queues"].toArray()[selectedIndex].toObject()["ready"].toInt()));
    QCOMPARE(window.queuesPage()->selectedSourceRow(), row);
    QCOMPARE(detail->bindings().rowCount(), 1);
    QCOMPARE(detail->consumers().rowCount(), 1);
    QCOMPARE(detail->depthPointCount(), Rounds + 1);

    // Opening the Talkers tab shows what it followed while hidden: every identity's rates over
    // the snapshots seen (2 publishes and 3 deliveries per second of uptime), not zeros; or,
    // paged, the broker's rates of its page.
    if (tab != MainWindow::TalkersTab && clients > 0) {
        timer.restart();
        const double cpuBefore = threadCpuMs();
        window.tabs()->setCurrentIndex(MainWindow::TalkersTab);
        QApplication::processEvents();
        qInfo("%s: opening the Talkers tab: %.1f ms, GUI thread CPU %.1f ms",
              QTest::currentDataTag(), timer.nsecsElapsed() / 1e6, threadCpuMs() - cpuBefore);
        const auto &talkers = window.talkersPage()->model();
        QCOMPARE(talkers.rowCount(), scale.shownTalkers());
        QCOMPARE(talkers.brokerRates(), scale.talkersPaged());
        const int talker = talkers.rowOf(QStringLiteral("svc-%1").arg(scale.shownTalkers() - 1));
        QCOMPARE(talkers.index(talker, cmq::admingui::TalkerTableModel::PublishRate)
                     .data(cmq::admingui::JsonTableModel::SortRole)
                     .toDouble(),
                 2.0);
        QCOMPARE(talkers.index(talker, cmq::admingui::TalkerTableModel::DeliverRate)
                     .data(cmq::admingui::JsonTableModel::SortRole)
                     .toDouble(),
                 3.0);
        QCOMPARE(window.talkersPage()->chartedNames().size(),
                 std::min(clients, int(cmq::admingui::TalkersPage::ChartedTalkers)));
    }
}

QTEST_MAIN(tst_LargeSnapshot)
#include "tst_largesnapshot.moc"
