// The per-CN and per-IP rate limiter on a hand-moved clock: global and publish buckets with
// exact rejection points, refusals that cost nothing, batches, connection caps with symmetric
// counts, reconfiguration, the off switch, and bounded memory under CN/IP churn.

#include <QTest>

#include "handlers/refusalreplies.h"
#include "limits/clock.h"
#include "limits/ratelimiter.h"

using cmq::Config;
using cmq::limits::BucketKind;
using cmq::limits::ManualClock;
using cmq::limits::RateLimiter;
using cmq::limits::Scope;

namespace {

Config::RateLimit settings(double globalRps, double globalBurst, double publishRps,
                           double publishBurst, int perIp = 50, int perCn = 20)
{
    Config::RateLimit s;
    s.enabled = true;
    s.globalRps = globalRps;
    s.globalBurst = globalBurst;
    s.publishRps = publishRps;
    s.publishBurst = publishBurst;
    s.ipGlobalRps = globalRps; // as loadConfig() does when the ip_* keys are absent
    s.ipGlobalBurst = globalBurst;
    s.ipPublishRps = publishRps;
    s.ipPublishBurst = publishBurst;
    s.maxConnectionsPerIp = perIp;
    s.maxConnectionsPerCn = perCn;
    return s;
}

const QHostAddress kIp1(QStringLiteral("10.0.0.1"));
const QHostAddress kIp2(QStringLiteral("10.0.0.2"));

// The text a refusal is answered with, after "Error: ".
QString textOf(const cmq::limits::Refusal &refused)
{
    return QString::fromUtf8(cmq::handlers::refusalText(refused));
}

} // namespace

class tst_RateLimiter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void requestSequence_data();
    void requestSequence();
    void refusalTextNamesTheBucket_data();
    void refusalTextNamesTheBucket();
    void refusalCostsNothing();
    void batchNeedsOneTokenAndPaysAll();
    void ipBucketIsShared();
    void mappedIpv4IsTheSameClient();
    void ipRatesOfTheirOwn();
    void connectionCaps_data();
    void connectionCaps();
    void connectionCountsAreSymmetric();
    void connectionRefusalTexts();
    void disabledLimitsNothingButCounts();
    void reconfigure();
    void countersAndViews();
    void idleEntriesAreFreed();
    void churnIsBounded();
};

void tst_RateLimiter::requestSequence_data()
{
    // Each step: "g" a plain request, "p" a publish, "+N" the clock moves N ms.
    // Expected: one character per request, "1" accepted or "0" refused.
    QTest::addColumn<Config::RateLimit>("limits");
    QTest::addColumn<QString>("steps");
    QTest::addColumn<QString>("outcomes");
    QTest::newRow("global burst") << settings(10, 3, 100, 100) << "g g g g"
                                  << "1110";
    QTest::newRow("global refill at 100 ms") << settings(10, 1, 100, 100) << "g g +99 g +1 g g"
                                             << "10010";
    QTest::newRow("publish burst below global") << settings(100, 100, 1, 2) << "p p p g"
                                                << "1101";
    QTest::newRow("publish refill at 1 s") << settings(100, 100, 1, 1) << "p +999 p +1 p"
                                           << "101";
    QTest::newRow("publish takes a global token too") << settings(10, 2, 100, 100) << "p p p g"
                                                      << "1100";
    QTest::newRow("global refusal blocks publish") << settings(1, 1, 100, 100) << "g p +1000 p"
                                                   << "101";
    QTest::newRow("long idle caps at burst") << settings(10, 2, 100, 100) << "+60000 g g g"
                                             << "110";
}

void tst_RateLimiter::requestSequence()
{
    QFETCH(Config::RateLimit, limits);
    QFETCH(QString, steps);
    QFETCH(QString, outcomes);
    ManualClock clock;
    RateLimiter limiter(limits, clock);
    QString got;
    for (const QString &step : steps.split(u' ', Qt::SkipEmptyParts)) {
        if (step.startsWith(u'+')) {
            clock.advanceMs(step.mid(1).toLongLong());
            continue;
        }
        const int cost = step == QLatin1String("p") ? 1 : 0;
        got += limiter.admitRequest(QStringLiteral("svc"), kIp1, cost) ? u'0' : u'1';
    }
    QCOMPARE(got, outcomes);
}

void tst_RateLimiter::refusalTextNamesTheBucket_data()
{
    QTest::addColumn<Config::RateLimit>("limits");
    QTest::addColumn<int>("cost");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<QString>("text");
    QTest::newRow("cn global") << settings(5, 1, 50, 100) << 0 << "cn_global"
                               << "rate limit exceeded: request rate of CN 'svc' is limited to "
                                  "5/s (burst 1)";
    QTest::newRow("cn publish") << settings(100, 200, 0.5, 1) << 1 << "cn_publish"
                                << "rate limit exceeded: publish rate of CN 'svc' is limited to "
                                   "0.5/s (burst 1)";
}

void tst_RateLimiter::refusalTextNamesTheBucket()
{
    QFETCH(Config::RateLimit, limits);
    QFETCH(int, cost);
    QFETCH(QString, reason);
    QFETCH(QString, text);
    ManualClock clock;
    RateLimiter limiter(limits, clock);
    QVERIFY(!limiter.admitRequest(QStringLiteral("svc"), kIp1, cost));
    const auto refused = limiter.admitRequest(QStringLiteral("svc"), kIp1, cost);
    QVERIFY(refused);
    QCOMPARE(refused->reason, reason);
    QCOMPARE(textOf(*refused), text);
}

void tst_RateLimiter::refusalCostsNothing()
{
    // Publish bucket empty, global full: a refused publish must not drain the global bucket.
    ManualClock clock;
    RateLimiter limiter(settings(10, 3, 1, 1), clock);
    QVERIFY(!limiter.admitRequest(QStringLiteral("svc"), kIp1, 1)); // global 2 left
    for (int i = 0; i < 5; ++i)
        QVERIFY(limiter.admitRequest(QStringLiteral("svc"), kIp1, 1));
    QVERIFY(!limiter.admitRequest(QStringLiteral("svc"), kIp1, 0));
    QVERIFY(!limiter.admitRequest(QStringLiteral("svc"), kIp1, 0));
    QVERIFY(limiter.admitRequest(QStringLiteral("svc"), kIp1, 0));
    QCOMPARE(limiter.rejections(Scope::Cn, BucketKind::Publish), 5u);
    QCOMPARE(limiter.rejections(Scope::Cn, BucketKind::Global), 1u);
}

void tst_RateLimiter::batchNeedsOneTokenAndPaysAll()
{
    ManualClock clock;
    RateLimiter limiter(settings(1000, 1000, 10, 5), clock);
    // A batch of 30 against a burst of 5: accepted (one token there), bucket now at -25.
    QVERIFY(!limiter.admitRequest(QStringLiteral("svc"), kIp1, 30));
    QVERIFY(limiter.admitRequest(QStringLiteral("svc"), kIp1, 1));
    clock.advanceMs(2500); // -25 + 25 = 0
    QVERIFY(limiter.admitRequest(QStringLiteral("svc"), kIp1, 1));
    clock.advanceMs(100); // 1
    QVERIFY(!limiter.admitRequest(QStringLiteral("svc"), kIp1, 1));
    QVERIFY(limiter.admitRequest(QStringLiteral("svc"), kIp1, 1));
}

void tst_RateLimiter::ipBucketIsShared()
{
    // Two CNs behind one address share its per-IP bucket; another address does not.
    ManualClock clock;
    RateLimiter limiter(settings(10, 2, 100, 100), clock);
    QVERIFY(!limiter.admitRequest(QStringLiteral("a"), kIp1, 0));
    QVERIFY(!limiter.admitRequest(QStringLiteral("b"), kIp1, 0));
    const auto refused = limiter.admitRequest(QStringLiteral("c"), kIp1, 0);
    QVERIFY(refused);
    QCOMPARE(refused->reason, QStringLiteral("ip_global"));
    QVERIFY(textOf(*refused).contains(QLatin1String("IP 10.0.0.1")));
    QVERIFY(!limiter.admitRequest(QStringLiteral("c"), kIp2, 0));
}

void tst_RateLimiter::mappedIpv4IsTheSameClient()
{
    QCOMPARE(RateLimiter::ipKey(QHostAddress(QStringLiteral("::ffff:10.0.0.1"))),
             QStringLiteral("10.0.0.1"));
    QCOMPARE(RateLimiter::ipKey(QHostAddress(QStringLiteral("::1"))), QStringLiteral("::1"));
    ManualClock clock;
    RateLimiter limiter(settings(10, 1, 100, 100), clock);
    QVERIFY(!limiter.admitRequest(QStringLiteral("a"), kIp1, 0));
    QVERIFY(limiter.admitRequest(QStringLiteral("b"),
                                 QHostAddress(QStringLiteral("::ffff:10.0.0.1")), 0));
}

void tst_RateLimiter::ipRatesOfTheirOwn()
{
    // A NAT address with a larger allowance than any one CN behind it.
    Config::RateLimit s = settings(10, 2, 10, 1);
    s.ipGlobalRps = 1000;
    s.ipGlobalBurst = 6;
    s.ipPublishRps = 1000;
    s.ipPublishBurst = 3;
    ManualClock clock;
    RateLimiter limiter(s, clock);
    QString got;
    for (const char *cn : {"a", "a", "b", "c", "d"})
        got += limiter.admitRequest(QString::fromLatin1(cn), kIp1, 1) ? u'0' : u'1';
    // a: its own publish burst of 1; b, c: fine; d: the address's burst of 3 is spent.
    QCOMPARE(got, QStringLiteral("10110"));
    const auto refused = limiter.admitRequest(QStringLiteral("e"), kIp1, 1);
    QCOMPARE(textOf(*refused), QStringLiteral("rate limit exceeded: publish rate of IP 10.0.0.1 is "
                                              "limited to 1000/s (burst 3)"));
    const auto views = limiter.clients();
    QCOMPARE(views.last().scope, Scope::Ip);
    QCOMPARE(views.last().publish.burst, 3.0);
    QCOMPARE(views.last().global.rate, 1000.0);
    // Reconfiguring keeps the scopes apart too.
    s.ipPublishBurst = 50;
    limiter.configure(s);
    QCOMPARE(limiter.clients().last().publish.burst, 50.0);
    QCOMPARE(limiter.clients().first().publish.burst, 1.0);
}

void tst_RateLimiter::connectionCaps_data()
{
    // Connections opened in order as "cn@ip"; expected "1" admitted or the refusal reason.
    QTest::addColumn<int>("perIp");
    QTest::addColumn<int>("perCn");
    QTest::addColumn<QStringList>("connections");
    QTest::addColumn<QStringList>("outcomes");
    QTest::newRow("per cn") << 50 << 2 << QStringList{"a@1", "a@2", "a@1", "b@1"}
                            << QStringList{"1", "1", "cn_limit", "1"};
    QTest::newRow("per ip") << 2 << 20 << QStringList{"a@1", "b@1", "c@1", "c@2"}
                            << QStringList{"1", "1", "ip_limit", "1"};
    QTest::newRow("ip checked first")
        << 1 << 1 << QStringList{"a@1", "a@1"} << QStringList{"1", "ip_limit"};
}

void tst_RateLimiter::connectionCaps()
{
    QFETCH(int, perIp);
    QFETCH(int, perCn);
    QFETCH(QStringList, connections);
    QFETCH(QStringList, outcomes);
    ManualClock clock;
    RateLimiter limiter(settings(10, 10, 10, 10, perIp, perCn), clock);
    QStringList got;
    for (const QString &c : connections) {
        const QStringList parts = c.split(u'@');
        const QHostAddress ip(QStringLiteral("10.0.0.") + parts[1]);
        const auto refused = limiter.acquireConnection(parts[0], ip);
        got.append(refused ? refused->reason : QStringLiteral("1"));
    }
    QCOMPARE(got, outcomes);
}

void tst_RateLimiter::connectionCountsAreSymmetric()
{
    ManualClock clock;
    RateLimiter limiter(settings(10, 10, 10, 10, 2, 2), clock);
    QVERIFY(!limiter.acquireConnection(QStringLiteral("a"), kIp1));
    QVERIFY(!limiter.acquireConnection(QStringLiteral("a"), kIp1));
    // Refused attempts are never counted, so nothing is ever released for them.
    for (int i = 0; i < 10; ++i)
        QVERIFY(limiter.acquireConnection(QStringLiteral("a"), kIp1));
    limiter.releaseConnection(QStringLiteral("a"), kIp1);
    QVERIFY(!limiter.acquireConnection(QStringLiteral("a"), kIp1));
    limiter.releaseConnection(QStringLiteral("a"), kIp1);
    limiter.releaseConnection(QStringLiteral("a"), kIp1);
    const auto views = limiter.clients();
    QCOMPARE(views.size(), 2);
    for (const auto &v : views)
        QCOMPARE(v.connections, 0);
    QVERIFY(!limiter.acquireConnection(QStringLiteral("a"), kIp1));
    QVERIFY(!limiter.acquireConnection(QStringLiteral("a"), kIp1));
}

void tst_RateLimiter::connectionRefusalTexts()
{
    ManualClock clock;
    RateLimiter limiter(settings(100, 100, 100, 100, 2, 1), clock);
    QVERIFY(!limiter.acquireConnection(QStringLiteral("a"), kIp1));
    const auto byCn = limiter.acquireConnection(QStringLiteral("a"), kIp2);
    QVERIFY(byCn);
    QCOMPARE(byCn->reason, QStringLiteral("cn_limit"));
    QCOMPARE(textOf(*byCn), QStringLiteral("Too many connections for CN 'a' (limit 1)"));
    QVERIFY(!limiter.acquireConnection(QStringLiteral("b"), kIp1));
    const auto byIp = limiter.acquireConnection(QStringLiteral("c"), kIp1);
    QVERIFY(byIp);
    QCOMPARE(byIp->reason, QStringLiteral("ip_limit"));
    QCOMPARE(textOf(*byIp), QStringLiteral("Too many connections from 10.0.0.1 (limit 2)"));
}

void tst_RateLimiter::disabledLimitsNothingButCounts()
{
    ManualClock clock;
    Config::RateLimit off = settings(1, 1, 1, 1, 1, 1);
    off.enabled = false;
    RateLimiter limiter(off, clock);
    for (int i = 0; i < 100; ++i)
        QVERIFY(!limiter.admitRequest(QStringLiteral("a"), kIp1, 1));
    QVERIFY(!limiter.acquireConnection(QStringLiteral("a"), kIp1));
    QVERIFY(!limiter.acquireConnection(QStringLiteral("a"), kIp1));
    // Enabling (a reload) finds the true counts: two open, limit one.
    Config::RateLimit on = off;
    on.enabled = true;
    limiter.configure(on);
    QCOMPARE(limiter.acquireConnection(QStringLiteral("b"), kIp1)->reason,
             QStringLiteral("ip_limit"));
    limiter.releaseConnection(QStringLiteral("a"), kIp1);
    limiter.releaseConnection(QStringLiteral("a"), kIp1);
    QVERIFY(!limiter.acquireConnection(QStringLiteral("b"), kIp1));
    QCOMPARE(limiter.totalRejections(), 0u);
}

void tst_RateLimiter::reconfigure()
{
    ManualClock clock;
    RateLimiter limiter(settings(1, 5, 100, 100), clock);
    QVERIFY(!limiter.admitRequest(QStringLiteral("a"), kIp1, 0)); // 4 left
    limiter.configure(settings(1000, 2, 100, 100));
    QVERIFY(!limiter.admitRequest(QStringLiteral("a"), kIp1, 0)); // capped at 2: 1 left
    QVERIFY(!limiter.admitRequest(QStringLiteral("a"), kIp1, 0));
    QVERIFY(limiter.admitRequest(QStringLiteral("a"), kIp1, 0));
    clock.advanceMs(1); // the new rate: 1 token per ms
    QVERIFY(!limiter.admitRequest(QStringLiteral("a"), kIp1, 0));
}

void tst_RateLimiter::countersAndViews()
{
    ManualClock clock;
    RateLimiter limiter(settings(10, 2, 5, 1), clock);
    QVERIFY(!limiter.acquireConnection(QStringLiteral("svc"), kIp1));
    QVERIFY(!limiter.admitRequest(QStringLiteral("svc"), kIp1, 1));
    QVERIFY(limiter.admitRequest(QStringLiteral("svc"), kIp1, 1)); // publish empty
    QVERIFY(!limiter.admitRequest(QStringLiteral("svc"), kIp1, 0));
    QVERIFY(limiter.admitRequest(QStringLiteral("svc"), kIp1, 0)); // global empty
    clock.advanceMs(50);
    const auto views = limiter.clients();
    QCOMPARE(views.size(), 2);
    const auto &cn = views[0];
    QCOMPARE(cn.scope, Scope::Cn);
    QCOMPARE(cn.key, QStringLiteral("svc"));
    QCOMPARE(cn.connections, 1);
    QCOMPARE(cn.connectionLimit, 20);
    QCOMPARE(cn.global.accepted, 2u);
    QCOMPARE(cn.global.rejected, 1u);
    QCOMPARE(cn.global.tokens, 0.5);
    QCOMPARE(cn.global.rate, 10.0);
    QCOMPARE(cn.global.burst, 2.0);
    QCOMPARE(cn.publish.accepted, 1u);
    QCOMPARE(cn.publish.rejected, 1u);
    QCOMPARE(cn.publish.tokens, 0.25);
    QCOMPARE(cn.idleSeconds, 0.05);
    const auto &ip = views[1];
    QCOMPARE(ip.scope, Scope::Ip);
    QCOMPARE(ip.key, QStringLiteral("10.0.0.1"));
    QCOMPARE(ip.connectionLimit, 50);
    QCOMPARE(ip.global.accepted, 2u);
    QCOMPARE(ip.global.rejected, 0u); // the CN bucket refused first
    QCOMPARE(limiter.rejections(Scope::Cn, BucketKind::Global), 1u);
    QCOMPARE(limiter.rejections(Scope::Cn, BucketKind::Publish), 1u);
    QCOMPARE(limiter.rejections(Scope::Ip, BucketKind::Global), 0u);
}

void tst_RateLimiter::idleEntriesAreFreed()
{
    ManualClock clock;
    RateLimiter limiter(settings(10, 10, 10, 10), clock, /*idleRetentionMs=*/60000);
    QVERIFY(!limiter.acquireConnection(QStringLiteral("stays"), kIp1));
    QVERIFY(!limiter.admitRequest(QStringLiteral("gone"), kIp2, 0));
    QCOMPARE(limiter.trackedEntries(), 4);
    clock.advanceMs(59999);
    limiter.sweep();
    QCOMPARE(limiter.trackedEntries(), 4);
    clock.advanceMs(1);
    limiter.sweep();
    // The client with an open connection keeps its entries whatever the time.
    QCOMPARE(limiter.trackedEntries(), 2);
    limiter.releaseConnection(QStringLiteral("stays"), kIp1);
    clock.advanceMs(60000);
    QVERIFY(!limiter.admitRequest(QStringLiteral("x"), kIp2, 0)); // sweeps on the way
    QCOMPARE(limiter.trackedEntries(), 2);                        // only x and 10.0.0.2
}

void tst_RateLimiter::churnIsBounded()
{
    // 50,000 clients, each from its own address, connect and leave within the retention time:
    // the idle entries never exceed the cap (plus the few busy ones).
    ManualClock clock;
    const qsizetype cap = 1000;
    RateLimiter limiter(settings(100, 200, 50, 100), clock, 300000, cap);
    qsizetype most = 0;
    for (int i = 0; i < 50000; ++i) {
        const QString cn = QStringLiteral("client-%1").arg(i);
        const QHostAddress ip(quint32(0x0A000000 + i));
        QVERIFY(!limiter.acquireConnection(cn, ip));
        QVERIFY(!limiter.admitRequest(cn, ip, 1));
        limiter.releaseConnection(cn, ip);
        clock.advanceMs(1);
        most = qMax(most, limiter.trackedEntries());
    }
    QVERIFY2(most <= cap + 2, qPrintable(QString::number(most)));
    // The most recent clients are still known (their counters survive).
    const auto views = limiter.clients();
    const bool recentKept = std::any_of(views.cbegin(), views.cend(), [](const auto &v) {
        return v.key == QLatin1String("client-49999");
    });
    QVERIFY(recentKept);
    clock.advanceMs(300000);
    limiter.sweep();
    QCOMPARE(limiter.trackedEntries(), 0);
}

QTEST_APPLESS_MAIN(tst_RateLimiter)
#include "tst_ratelimiter.moc"
