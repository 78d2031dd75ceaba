// Paged snapshots (docs/ADMIN-PROTOCOL.md, "Paging") against a real broker with 300 queues:
// a page and its totals, the filter, the sort keys with their tie-breaker, only the page's
// bindings, the connection list's and the rate-limit buckets' pages, the talkers' page by the
// broker's recent publish rate (`watch` and the `talkers` command), a watch that pages and one
// that stops paging, and that `json`, `watch` and `talkers` without page options answer as
// before.

#include "adminfixture.h"

using namespace cmq::test;

namespace {

constexpr int QueueCount = 300;

QString queueName(int i)
{
    return QStringLiteral("receiver_1_p%1").arg(i, 3, 10, QLatin1Char('0'));
}

QStringList namesOf(const QJsonArray &queues)
{
    QStringList names;
    for (const QJsonValue &q : queues)
        names.append(q.toObject().value("name").toString());
    return names;
}

QStringList expectedNames(int first, int count)
{
    QStringList names;
    for (int i = first; i < first + count; ++i)
        names.append(queueName(i));
    return names;
}

QJsonObject snapshotLine(TestClient *client)
{
    return parseAdminReply(client->readLineStartingWith("Snapshot: ", 5000).mid(10)).toObject();
}

} // namespace

class tst_WatchPaging : public QObject, public AdminFixture
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase() { QVERIFY(stopBroker()); }
    void unpagedUnchanged();
    void pageAndTotals();
    void filter();
    void sortKeys();
    void bindingsOfThePage();
    void connectionPage();
    void bucketPage();
    void watchPages();
    void badOption();
    void talkerPage(); // last: its publishes change the ready counts the others sort by
};

void tst_WatchPaging::initTestCase()
{
    // 600 declarations and binds in a burst: past the default per-client request rate.
    m_broker.set("rate_limit.enabled", "false");
    QVERIFY(startBroker());
    TestClient *owner = dataClient("receiver_1");
    for (int i = 0; i < QueueCount; ++i) {
        const QByteArray name = queueName(i).toUtf8();
        owner->send("declare_queue " + name);
        owner->send("bind " + name + " CipherMQ_exchange " + name);
    }
    const QList<QByteArray> replies = owner->readLines(2 * QueueCount, 60000);
    QCOMPARE(replies.size(), 2 * QueueCount);
    QCOMPARE(replies.count("Queue declared"), QueueCount);
    QCOMPARE(replies.count("Queue bound"), QueueCount);
    // Ready counts to sort by: p020 5, p010 3, p030 1, every other queue 0.
    for (const auto &[queue, count] : {std::pair{20, 5}, std::pair{10, 3}, std::pair{30, 1}}) {
        for (int m = 0; m < count; ++m)
            publish(queueName(queue).toUtf8(),
                    QStringLiteral("m-%1-%2").arg(queue).arg(m).toUtf8());
    }
}

void tst_WatchPaging::unpagedUnchanged()
{
    const QJsonObject json = ask("json").toObject();
    QVERIFY(!json.contains("queues_page"));
    QVERIFY(!json.contains("connections_page"));
    QCOMPARE(json.value("queues").toArray().size(), QueueCount);
    QCOMPARE(json.value("bindings").toArray().size(), QueueCount);

    TestClient *watcher = adminClient();
    // The reply line is exactly what it was before paging existed.
    QCOMPARE(watcher->request("watch 100 queues,bindings"),
             QByteArray(R"({"action":"watch","interval_ms":100,"ok":true,)"
                        R"("sections":["queues","bindings"]})"));
    const QJsonObject snapshot = snapshotLine(watcher);
    QVERIFY(!snapshot.contains("queues_page"));
    QVERIFY(!snapshot.contains("connections"));
    // Every queue, by name, as the `queues` view has them (less the lag, which moves).
    const auto withoutLag = [](QJsonArray queues) {
        for (auto &&q : queues) {
            QJsonObject o = q.toObject();
            o.remove("oldest_ready_age_ms");
            q = o;
        }
        return queues;
    };
    QCOMPARE(withoutLag(snapshot.value("queues").toArray()), withoutLag(ask("queues").toArray()));
    QCOMPARE(namesOf(snapshot.value("queues").toArray()), expectedNames(0, QueueCount));
    QCOMPARE(snapshot.value("bindings").toArray(), ask("bindings").toArray());
}

void tst_WatchPaging::pageAndTotals()
{
    const QJsonObject json = ask("json queues.offset=100 queues.limit=50").toObject();
    QCOMPARE(namesOf(json.value("queues").toArray()), expectedNames(100, 50));
    QCOMPARE(json.value("queues_page").toObject(), (QJsonObject{{"offset", 100},
                                                                {"limit", 50},
                                                                {"matched", QueueCount},
                                                                {"total", QueueCount},
                                                                {"sort", "name"},
                                                                {"order", "asc"},
                                                                {"filter", ""}}));
    // Connections are not paged unless asked: the whole list, no connections_page.
    QVERIFY(!json.contains("connections_page"));
    QCOMPARE(json.value("connections").toArray().size(), ask("connections").toArray().size());
    // The last, short page; a page past the end is empty but still counts.
    QCOMPARE(
        namesOf(ask("json queues.offset=280 queues.limit=50").toObject().value("queues").toArray()),
        expectedNames(280, 20));
    const QJsonObject past = ask("json queues.offset=1000").toObject();
    QCOMPARE(past.value("queues").toArray().size(), 0);
    QCOMPARE(past.value("queues_page").toObject().value("matched").toInt(), QueueCount);
    QCOMPARE(past.value("queues_page").toObject().value("limit").toInt(), 200); // the default
}

void tst_WatchPaging::filter()
{
    // Case-insensitive, on the name: p010 to p019 contain "p01".
    const QJsonObject json = ask("json queues.filter=P01 queues.limit=5").toObject();
    QCOMPARE(namesOf(json.value("queues").toArray()), expectedNames(10, 5));
    const QJsonObject info = json.value("queues_page").toObject();
    QCOMPARE(info.value("matched").toInt(), 10);
    QCOMPARE(info.value("total").toInt(), QueueCount);
    QCOMPARE(info.value("filter").toString(), QStringLiteral("P01"));
    // On the owner too; nothing matches a stranger.
    QCOMPARE(ask("json queues.filter=RECEIVER_1")
                 .toObject()
                 .value("queues_page")
                 .toObject()
                 .value("matched")
                 .toInt(),
             QueueCount);
    const QJsonObject none = ask("json queues.filter=nobody").toObject();
    QCOMPARE(none.value("queues").toArray().size(), 0);
    QCOMPARE(none.value("queues_page").toObject().value("matched").toInt(), 0);
}

void tst_WatchPaging::sortKeys()
{
    // By ready, descending; ties in name order.
    const QJsonObject ready =
        ask("json queues.sort=ready queues.order=desc queues.limit=5").toObject();
    QCOMPARE(
        namesOf(ready.value("queues").toArray()),
        (QStringList{queueName(20), queueName(10), queueName(30), queueName(0), queueName(1)}));
    QCOMPARE(ready.value("queues_page").toObject().value("sort").toString(), u"ready");
    QCOMPARE(ready.value("queues_page").toObject().value("order").toString(), u"desc");
    // The same order, offset by two, is the same rows: pages are stable.
    QCOMPARE(namesOf(ask("json queues.sort=ready queues.order=desc queues.offset=2 "
                         "queues.limit=3")
                         .toObject()
                         .value("queues")
                         .toArray()),
             (QStringList{queueName(30), queueName(0), queueName(1)}));
    // Lag as time: the queues holding messages first, the one with the oldest head on top.
    QTRY_VERIFY_WITH_TIMEOUT(ask("json queues.sort=oldest_ready_age_ms queues.order=desc "
                                 "queues.limit=1")
                                     .toObject()
                                     .value("queues")
                                     .toArray()
                                     .first()
                                     .toObject()
                                     .value("oldest_ready_age_ms")
                                     .toInteger() > 0,
                             5000);
    const QJsonArray lag = ask("json queues.sort=oldest_ready_age_ms queues.order=desc "
                               "queues.limit=4")
                               .toObject()
                               .value("queues")
                               .toArray();
    const QStringList lagNames = namesOf(lag);
    QCOMPARE(QSet<QString>(lagNames.cbegin(), lagNames.cbegin() + 3),
             (QSet<QString>{queueName(10), queueName(20), queueName(30)}));
    for (int i = 1; i < lag.size(); ++i)
        QVERIFY(lag[i - 1].toObject().value("oldest_ready_age_ms").toInteger() >=
                lag[i].toObject().value("oldest_ready_age_ms").toInteger());
    QCOMPARE(lagNames.last(), queueName(0)); // nothing ready: age 0, then name order
    // By name descending.
    QCOMPARE(
        namesOf(ask("json queues.order=desc queues.limit=2").toObject().value("queues").toArray()),
        (QStringList{queueName(299), queueName(298)}));
}

void tst_WatchPaging::bindingsOfThePage()
{
    const QJsonObject json = ask("json queues.offset=5 queues.limit=3").toObject();
    QJsonArray expected;
    for (int i = 5; i < 8; ++i)
        expected.append(QJsonObject{{"exchange", "CipherMQ_exchange"},
                                    {"routing_key", queueName(i)},
                                    {"queue", queueName(i)}});
    QCOMPARE(json.value("bindings").toArray(), expected);
    // The exchanges keep their whole binding counts.
    QCOMPARE(findBy(json.value("exchanges").toArray(), "name", "CipherMQ_exchange")
                 .value("bindings")
                 .toInt(),
             QueueCount);
}

void tst_WatchPaging::connectionPage()
{
    const int all = ask("connections").toArray().size();
    QVERIFY(all >= 4); // the fixture's admin, sender and receiver, initTestCase's owner
    const QJsonObject json = ask("json connections.filter=sender_1").toObject();
    const QJsonArray rows = json.value("connections").toArray();
    QCOMPARE(rows.size(), 1);
    QCOMPARE(rows.first().toObject().value("cn").toString(), u"sender_1");
    QCOMPARE(json.value("connections_page").toObject().value("total").toInt(), all);
    QCOMPARE(json.value("connections_page").toObject().value("sort").toString(), u"id");
    // Newest first: the asking admin connection is not the newest, the last one opened is.
    const QJsonArray newest = ask("json connections.order=desc connections.limit=2")
                                  .toObject()
                                  .value("connections")
                                  .toArray();
    QCOMPARE(newest.size(), 2);
    QVERIFY(newest[0].toObject().value("id").toInteger() >
            newest[1].toObject().value("id").toInteger());
    const QJsonArray byCn = ask("json connections.sort=cn connections.limit=10000")
                                .toObject()
                                .value("connections")
                                .toArray();
    QCOMPARE(byCn.size(), all);
    QCOMPARE(byCn.first().toObject().value("cn").toString(), u"ops-admin");
    QCOMPARE(byCn.last().toObject().value("cn").toString(), u"sender_1");
}

void tst_WatchPaging::bucketPage()
{
    // The limits are off here, but the buckets are kept: one per client CN and per IP.
    const QJsonObject whole = ask("json").toObject().value("ratelimits").toObject();
    const QJsonArray all = whole.value("buckets").toArray();
    QVERIFY(all.size() >= 3); // sender_1, receiver_1, 127.0.0.1
    QVERIFY(!ask("json").toObject().contains("ratelimits_page"));
    const QJsonObject json = ask("json ratelimits.filter=SENDER_1").toObject();
    const QJsonObject limits = json.value("ratelimits").toObject();
    const QJsonArray rows = limits.value("buckets").toArray();
    QCOMPARE(rows.size(), 1);
    QCOMPARE(rows.first().toObject().value("key").toString(), u"sender_1");
    QCOMPARE(rows.first().toObject().value("scope").toString(), u"cn");
    // The rest of the object is the whole view's.
    QCOMPARE(limits.value("settings").toObject(), whole.value("settings").toObject());
    QCOMPARE(limits.value("tracked").toInteger(), qint64(all.size()));
    QCOMPARE(json.value("ratelimits_page").toObject(), (QJsonObject{{"offset", 0},
                                                                    {"limit", 200},
                                                                    {"matched", 1},
                                                                    {"total", all.size()},
                                                                    {"sort", "scope"},
                                                                    {"order", "asc"},
                                                                    {"filter", "SENDER_1"}}));
    // The default order is the whole list's: CNs, then IPs, each by key.
    QStringList wholeKeys, pageKeys;
    for (const QJsonValue &b : all)
        wholeKeys.append(b.toObject().value("key").toString());
    const QJsonArray paged = ask("json ratelimits.limit=10000")
                                 .toObject()
                                 .value("ratelimits")
                                 .toObject()
                                 .value("buckets")
                                 .toArray();
    for (const QJsonValue &b : paged)
        pageKeys.append(b.toObject().value("key").toString());
    QCOMPARE(pageKeys, wholeKeys);
    // By key, descending: the IP address sorts before the CNs, so it is last.
    const QJsonArray byKey = ask("json ratelimits.sort=key ratelimits.order=desc")
                                 .toObject()
                                 .value("ratelimits")
                                 .toObject()
                                 .value("buckets")
                                 .toArray();
    QCOMPARE(byKey.size(), all.size());
    QCOMPARE(byKey.last().toObject().value("key").toString(), u"127.0.0.1");
    // Page options need the section: a watch without ratelimits refuses them.
    QCOMPARE(m_admin->request("watch 100 queues ratelimits.limit=1"),
             QByteArray("Error: Page option 'ratelimits.limit' for a list the watch leaves out"));
}

void tst_WatchPaging::talkerPage()
{
    // Without options: the array of totals, as before (no rates, no page object).
    const QJsonArray whole = ask("talkers").toArray();
    QCOMPARE(whole.size(), 2); // receiver_1 and sender_1; admins are not talkers
    QVERIFY(!whole[0].toObject().contains("publish_rate"));
    QVERIFY(!ask("json").toObject().contains("talkers_page"));

    // sender_1 publishes while the broker samples (once a second) until its rate shows; the
    // page of one, by publish rate, is sender_1 then, receiver_1 (more totals: it declared
    // 300 queues) does not head it.
    QJsonObject reply;
    const QDeadlineTimer deadline(30000);
    int sent = 0;
    do {
        publish(queueName(40).toUtf8(), "talker-" + QByteArray::number(++sent));
        reply =
            ask("talkers talkers.sort=publish_rate talkers.order=desc talkers.limit=1").toObject();
    } while (reply.value("talkers").toArray().first().toObject().value("publish_rate").toDouble() <=
                 0 &&
             !deadline.hasExpired());
    const QJsonObject first = reply.value("talkers").toArray().first().toObject();
    QCOMPARE(first.value("cn").toString(), u"sender_1");
    QVERIFY(first.value("publish_rate").toDouble() > 0);
    QVERIFY(first.value("bytes_in_rate").toDouble() > 0);
    QCOMPARE(reply.value("talkers_page").toObject(), (QJsonObject{{"offset", 0},
                                                                  {"limit", 1},
                                                                  {"matched", 2},
                                                                  {"total", 2},
                                                                  {"sort", "publish_rate"},
                                                                  {"order", "desc"},
                                                                  {"filter", ""}}));
    // By connections, receiver_1 (two) is first: the order is the key's, not always the rate's.
    QCOMPARE(ask("json talkers.sort=connections talkers.order=desc talkers.limit=1")
                 .toObject()
                 .value("talkers")
                 .toArray()[0]
                 .toObject()
                 .value("cn")
                 .toString(),
             u"receiver_1");

    // A watch carries the page each interval.
    TestClient *watcher = adminClient();
    watcher->send("watch 100 talkers talkers.filter=RECEIVER");
    QVERIFY(watcher->readLineStartingWith("{", 5000).contains(R"("ok":true)"));
    const QJsonObject snapshot = snapshotLine(watcher);
    QCOMPARE(snapshot.value("talkers").toArray().size(), 1);
    QCOMPARE(snapshot.value("talkers_page").toObject().value("matched").toInt(), 1);
    QVERIFY(snapshot.value("talkers").toArray()[0].toObject().contains("deliver_rate"));
    // The command's page options are the talkers' only.
    QCOMPARE(m_admin->request("talkers queues.limit=1"),
             QByteArray("Error: Page option 'queues.limit' for a list the watch leaves out"));
}

void tst_WatchPaging::watchPages()
{
    TestClient *watcher = adminClient();
    QVERIFY(watcher
                ->request("watch 100 queues,connections queues.sort=ready queues.order=desc "
                          "queues.limit=2 connections.limit=1")
                .startsWith("{"));
    QJsonObject snapshot = snapshotLine(watcher);
    QCOMPARE(namesOf(snapshot.value("queues").toArray()),
             (QStringList{queueName(20), queueName(10)}));
    QCOMPARE(snapshot.value("connections").toArray().size(), 1);
    QCOMPARE(snapshot.value("connections_page").toObject().value("limit").toInt(), 1);
    QVERIFY(!snapshot.contains("bindings"));
    // Every interval the same page, numbered as before.
    const qint64 first = snapshot.value("sequence").toInteger();
    snapshot = snapshotLine(watcher);
    QCOMPARE(snapshot.value("sequence").toInteger(), first + 1);
    QCOMPARE(snapshot.value("queues").toArray().size(), 2);

    // A later watch without options is the whole list again.
    watcher->send("watch 100 queues");
    QCOMPARE(watcher->readLineStartingWith("{", 5000),
             QByteArray(R"({"action":"watch","interval_ms":100,"ok":true,"sections":["queues"]})"));
    snapshot = snapshotLine(watcher);
    QCOMPARE(snapshot.value("queues").toArray().size(), QueueCount);
    QVERIFY(!snapshot.contains("queues_page"));

    // The buckets page like the lists; the watch carries its page each interval.
    watcher->send("watch 100 queues,ratelimits queues.limit=1 ratelimits.sort=key "
                  "ratelimits.limit=1");
    QVERIFY(watcher->readLineStartingWith("{", 5000).contains(R"("ok":true)"));
    snapshot = snapshotLine(watcher);
    QCOMPARE(snapshot.value("ratelimits").toObject().value("buckets").toArray().size(), 1);
    QCOMPARE(snapshot.value("ratelimits_page").toObject().value("sort").toString(), u"key");
    QCOMPARE(snapshot.value("ratelimits")
                 .toObject()
                 .value("buckets")
                 .toArray()[0]
                 .toObject()
                 .value("key")
                 .toString(),
             u"127.0.0.1");
}

void tst_WatchPaging::badOption()
{
    QCOMPARE(m_admin->request("watch 100 queues.limit=0"),
             QByteArray("Error: Invalid limit: expected a number from 1 to 10000"));
    QCOMPARE(m_admin->request("json queues.sort=speed").left(32),
             QByteArray("Error: Invalid sort key 'speed' "));
    // The connection is still good.
    QVERIFY(ask("json queues.limit=1").toObject().value("queues").toArray().size() == 1);
}

QTEST_GUILESS_MAIN(tst_WatchPaging)
#include "tst_70_watchpaging.moc"
