// The admin listener against the real broker (docs/ADMIN-PROTOCOL.md): who may connect to it,
// the read commands against a broker carrying traffic, the metrics text checked by promtool,
// the watch stream and `cmq admin`. Who else may connect, the AdminClient of common/ and the
// errors: tst_42_admin_access; the actions and reloading: tst_46_admin_actions.

#include <QProcess>

#include "adminfixture.h"

using cmq::test::AdminFixture;
using cmq::test::adminTestEnvelope;
using cmq::test::certFile;
using cmq::test::findBy;
using cmq::test::parseAdminReply;
using cmq::test::TestClient;

class tst_Admin : public QObject, protected AdminFixture
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void adminListenerAccess_data();
    void adminListenerAccess();
    void help();
    void longSessionOutgrowsAPipe();
    void queuesExchangesBindings();
    void connections();
    void rateLimits();
    void metricsPassesPromtool();
    void json();
    void watchAndUnwatch();
    void watchSections();
    void cmqAdmin_data();
    void cmqAdmin();
    void cmqAdminWatch();
};

void tst_Admin::initTestCase()
{
    QVERIFY(startBroker());
}

void tst_Admin::cleanupTestCase()
{
    QVERIFY(stopBroker());
}

void tst_Admin::adminListenerAccess_data()
{
    QTest::addColumn<QString>("identity");
    QTest::addColumn<QByteArray>("refusal"); // empty: admitted
    QTest::newRow("admin in allowed_cns") << "ops-admin" << QByteArray();
    QTest::newRow("admin not in allowed_cns")
        << "ops-admin-2"
        << QByteArray("Error: Unauthorized: certificate CN 'ops-admin-2' is not in "
                      "admin.allowed_cns");
    QTest::newRow("sender") << "sender_1"
                            << QByteArray("Error: Unauthorized: certificate CN 'sender_1' does "
                                          "not have the Admin role");
    QTest::newRow("receiver") << "receiver_1"
                              << QByteArray("Error: Unauthorized: certificate CN 'receiver_1' "
                                            "does not have the Admin role");
    QTest::newRow("sender and receiver") << "both-svc"
                                         << QByteArray("Error: Unauthorized: certificate CN "
                                                       "'both-svc' does not have the Admin role");
    QTest::newRow("unknown CN") << "stranger"
                                << QByteArray("Error: Unauthorized: certificate CN 'stranger' "
                                              "does not have the Admin role");
    QTest::newRow("no CN") << "nocn"
                           << QByteArray("Error: Unauthorized: the client certificate has no "
                                         "Common Name");
}

void tst_Admin::adminListenerAccess()
{
    QFETCH(QString, identity);
    QFETCH(QByteArray, refusal);
    TestClient client(identity);
    QVERIFY2(client.connectTo(m_adminPort), qPrintable(client.errorString()));
    if (refusal.isEmpty()) {
        QCOMPARE(
            parseAdminReply(client.request("help")).toObject().value("commands").toArray().size(),
            21);
        return;
    }
    // One error line, then the close; nothing a request could change.
    QCOMPARE(client.readLine(), refusal);
    QVERIFY(client.waitForDisconnected());
    QVERIFY(client.readLine(0).isNull());
}

void tst_Admin::help()
{
    const QJsonArray commands = ask("help").toObject().value("commands").toArray();
    QStringList names;
    for (const QJsonValue &v : commands)
        names.append(v.toString());
    QCOMPARE(names, (QStringList{"audit",        "bindings",       "connections",
                                 "dead_letters", "definitions",    "definitions_import",
                                 "delete_queue", "disconnect",     "exchanges",
                                 "help",         "json",           "metrics",
                                 "purge",        "queue_messages", "queues",
                                 "ratelimits",   "reload",         "requeue",
                                 "talkers",      "unwatch",        "watch"}));
}

void tst_Admin::longSessionOutgrowsAPipe()
{
    // The broker logs every admin request at info level: 3,000 of them print about 250 KB, far
    // more than a pipe holds (64 KB). The test never returns to an event loop while it asks, so
    // whatever carries the broker's output must take it without a reader: every request is
    // answered, and the output holds the last one's line.
    constexpr int Requests = 3000;
    for (int i = 1; i <= Requests; ++i) {
        const QByteArray reply = m_admin->request("talkers");
        if (!reply.startsWith('['))
            QFAIL(qPrintable(QStringLiteral("request %1 of %2: '%3'")
                                 .arg(i)
                                 .arg(Requests)
                                 .arg(QString::fromUtf8(reply.left(200)))));
    }
    QTRY_VERIFY_WITH_TIMEOUT(m_broker.output().count("admin ops-admin (connection ") >= Requests,
                             10000);
}

void tst_Admin::queuesExchangesBindings()
{
    ownQueue("views");
    for (int i = 0; i < 5; ++i)
        publish("receiver_1_views", "views-" + QByteArray::number(i));
    TestClient *consumer = dataClient("receiver_1");
    QCOMPARE(consumer->request("fetch receiver_1_views").left(17), "Message: views-0 ");
    QCOMPARE(consumer->request("ack views-0"), "ACK_CONFIRMED views-0");
    QCOMPARE(consumer->request("fetch receiver_1_views").left(17), "Message: views-1 ");

    const QJsonObject queue =
        findBy(ask("queues").toArray(), "name", QStringLiteral("receiver_1_views"));
    QCOMPARE(queue.value("owner").toString(), QStringLiteral("receiver_1"));
    QCOMPARE(queue.value("ready").toInt(), 3);
    QCOMPARE(queue.value("unacked").toInt(), 1);
    QCOMPARE(queue.value("consumers").toInt(), 0);
    QCOMPARE(queue.value("published").toInt(), 5);
    QCOMPARE(queue.value("delivered").toInt(), 2);
    QCOMPARE(queue.value("acknowledged").toInt(), 1);
    QCOMPARE(queue.value("max_length").toInt(), 10000);
    QCOMPARE(queue.value("overflow").toString(), QStringLiteral("drop-head"));
    QCOMPARE(queue.value("bytes").toInt(), 4 * adminTestEnvelope("views-0").size());

    const QJsonObject exchange =
        findBy(ask("exchanges").toArray(), "name", QStringLiteral("CipherMQ_exchange"));
    QCOMPARE(exchange.value("type").toString(), QStringLiteral("direct"));
    QCOMPARE(exchange.value("creator").toString(), QStringLiteral("receiver_1"));
    QVERIFY(exchange.value("bindings").toInt() >= 1);

    const QJsonObject binding =
        findBy(ask("bindings").toArray(), "queue", QStringLiteral("receiver_1_views"));
    QCOMPARE(binding.value("exchange").toString(), QStringLiteral("CipherMQ_exchange"));
    QCOMPARE(binding.value("routing_key").toString(), QStringLiteral("receiver_1_views"));
}

void tst_Admin::connections()
{
    ownQueue("conn");
    TestClient *consumer = dataClient("receiver_1");
    QCOMPARE(consumer->request("consume receiver_1_conn"), "Subscribed to queue");
    TestClient *publisher = dataClient("publisher-svc-1");
    for (int i = 0; i < 3; ++i) {
        const QByteArray id = "conn-" + QByteArray::number(i);
        QCOMPARE(publisher->request("publish CipherMQ_exchange receiver_1_conn " +
                                    adminTestEnvelope(id)),
                 "ACK " + id);
        QCOMPARE(consumer->readLine().left(16), "Message: " + id + ' ');
    }

    const QJsonArray all = ask("connections").toArray();
    const QJsonObject pub = findBy(all, "cn", QStringLiteral("publisher-svc-1"));
    QCOMPARE(pub.value("listener").toString(), QStringLiteral("data"));
    QCOMPARE(pub.value("roles").toArray(), QJsonArray{QStringLiteral("sender")});
    QCOMPARE(pub.value("address").toString(), QStringLiteral("127.0.0.1"));
    QCOMPARE(pub.value("port").toInt(), int(publisher->socket().localPort()));
    QCOMPARE(pub.value("messages_in").toInt(), 3);
    QCOMPARE(pub.value("requests").toInt(), 3);
    QVERIFY(pub.value("bytes_in").toInt() > 3 * adminTestEnvelope("conn-0").size());
    QVERIFY(pub.value("bytes_out").toInt() >= 3 * 11);
    QVERIFY(
        QDateTime::fromString(pub.value("connected_at").toString(), Qt::ISODateWithMs).isValid());
    const QJsonObject cert = pub.value("certificate").toObject();
    QVERIFY2(cert.value("subject").toString().contains(QLatin1String("CN=publisher-svc-1")),
             qPrintable(cert.value("subject").toString()));
    QVERIFY2(cert.value("issuer").toString().contains(QLatin1String("CipherMQ Test CA")),
             qPrintable(cert.value("issuer").toString()));
    QCOMPARE(cert.value("serial").toString(),
             QString::fromLatin1(
                 publisher->socket().sslConfiguration().localCertificate().serialNumber()));
    QVERIFY(QDateTime::fromString(cert.value("not_after").toString(), Qt::ISODateWithMs) >
            QDateTime::currentDateTimeUtc());

    // The consumer: find it by its consumed queue.
    QJsonObject con;
    for (const QJsonValue &v : all) {
        if (v.toObject().value("consumers").toArray().contains(QStringLiteral("receiver_1_conn")))
            con = v.toObject();
    }
    QCOMPARE(con.value("cn").toString(), QStringLiteral("receiver_1"));
    QCOMPARE(con.value("messages_out").toInt(), 3);
    QCOMPARE(con.value("unacked").toInt(), 3);
    QCOMPARE(con.value("prefetch").toInt(), 256);
    QCOMPARE(con.value("slow").toBool(), false);

    // Our own admin connection is listed too, on its listener.
    const QJsonObject self = findBy(all, "listener", QStringLiteral("admin"));
    QCOMPARE(self.value("cn").toString(), QStringLiteral("ops-admin"));
    QCOMPARE(self.value("roles").toArray(), QJsonArray{QStringLiteral("admin")});

    // Ids are unique across both listeners.
    QSet<qint64> ids;
    for (const QJsonValue &v : all)
        ids.insert(v.toObject().value("id").toInteger());
    QCOMPARE(ids.size(), all.size());
}

void tst_Admin::rateLimits()
{
    const QJsonObject limits = ask("ratelimits").toObject();
    QCOMPARE(limits.value("enabled").toBool(), false); // the test broker's default
    const QJsonObject settings = limits.value("settings").toObject();
    QCOMPARE(settings.value("global_rps").toDouble(), 100.0);
    QCOMPARE(settings.value("publish_burst").toDouble(), 100.0);
    QCOMPARE(settings.value("max_connections_per_cn").toInt(), 20);
    QCOMPARE(settings.value("max_connections").toInt(), 20000);
    QCOMPARE(limits.value("handshakes_in_progress").toInt(), 0);
    const QJsonArray buckets = limits.value("buckets").toArray();
    // Connection counts are kept even while the limits are off.
    QJsonObject sender;
    QJsonObject ip;
    for (const QJsonValue &v : buckets) {
        const QJsonObject o = v.toObject();
        if (o.value("scope") == QStringLiteral("cn") &&
            o.value("key") == QStringLiteral("sender_1"))
            sender = o;
        if (o.value("scope") == QStringLiteral("ip") &&
            o.value("key") == QStringLiteral("127.0.0.1"))
            ip = o;
    }
    // At least m_sender; others may still be closing.
    QVERIFY2(sender.value("connections").toInt() >= 1,
             qPrintable(QString::number(sender.value("connections").toInt())));
    QCOMPARE(sender.value("connection_limit").toInt(), 20);
    QCOMPARE(ip.value("connections").toInt(), limits.value("connections").toInt());
    QCOMPARE(ip.value("connection_limit").toInt(), 50);
    const QJsonObject global = sender.value("global").toObject();
    QVERIFY(global.contains("tokens"));
    QCOMPARE(global.value("rate").toDouble(), 100.0);
    QCOMPARE(global.value("burst").toDouble(), 200.0);
}

void tst_Admin::metricsPassesPromtool()
{
    ownQueue("metrics");
    for (int i = 0; i < 4; ++i)
        publish("receiver_1_metrics", "metrics-" + QByteArray::number(i));
    m_admin->send("metrics");
    const QByteArray text = readMetrics(m_admin);
    QVERIFY2(text.endsWith("\n# EOF\n"), text.right(200).constData());
    for (const char *family : {"ciphermq_messages_published_total",
                               "ciphermq_messages_routed_total",
                               "ciphermq_messages_unroutable_total",
                               "ciphermq_messages_delivered_total",
                               "ciphermq_messages_redelivered_total",
                               "ciphermq_messages_acknowledged_total",
                               "ciphermq_messages_evicted_total",
                               "ciphermq_messages_rejected_total",
                               "ciphermq_queue_messages_ready",
                               "ciphermq_queue_messages_unacked",
                               "ciphermq_queue_consumers",
                               "ciphermq_queue_messages_bytes",
                               "ciphermq_connections",
                               "ciphermq_tls_handshake_failures_total",
                               "ciphermq_rate_limit_rejections_total",
                               "ciphermq_storage_batch_records",
                               "ciphermq_storage_commit_duration_seconds",
                               "ciphermq_publish_ack_latency_seconds",
                               "ciphermq_process_resident_memory_bytes",
                               "ciphermq_process_open_fds",
                               "ciphermq_uptime_seconds"}) {
        QVERIFY2(text.contains("# TYPE " + QByteArray(family) + ' '), family);
    }
    QVERIFY(text.contains("ciphermq_queue_messages_ready{queue=\"receiver_1_metrics\"} 4\n"));
    QVERIFY(text.contains("ciphermq_connections{listener=\"admin\",role=\"admin\"} "));
    QVERIFY(text.contains("ciphermq_connections{listener=\"data\",role=\"sender\"} "));
    // Every publish so far was acknowledged: the latency histogram counted them.
    QVERIFY(!text.contains("ciphermq_publish_ack_latency_seconds_count 0\n"));

    const QString promtool = QStringLiteral("/usr/bin/promtool");
    QVERIFY2(QFile::exists(promtool), "promtool is missing: apt-get install prometheus");
    QProcess check;
    check.setProcessChannelMode(QProcess::MergedChannels);
    check.start(promtool, {QStringLiteral("check"), QStringLiteral("metrics")});
    QVERIFY(check.waitForStarted());
    check.write(text);
    check.closeWriteChannel();
    QVERIFY(check.waitForFinished(30000));
    const QByteArray verdict = check.readAll();
    QVERIFY2(check.exitStatus() == QProcess::NormalExit && check.exitCode() == 0,
             verdict.constData());
    QVERIFY2(verdict.trimmed().isEmpty(), verdict.constData()); // not even a lint warning
}

void tst_Admin::json()
{
    const QJsonObject o = ask("json").toObject();
    QCOMPARE(o.value("version").toInt(), 1);
    QVERIFY(QDateTime::fromString(o.value("time").toString(), Qt::ISODateWithMs).isValid());
    const QJsonObject broker = o.value("broker").toObject();
    QCOMPARE(broker.value("pid").toInteger(), m_broker.pid());
    QCOMPARE(broker.value("storage_driver").toString(), QStringLiteral("sqlite"));
    QCOMPARE(broker.value("admin_address").toString(),
             QStringLiteral("127.0.0.1:%1").arg(m_adminPort));
    QVERIFY(broker.value("uptime_seconds").toDouble() > 0);
    const QJsonObject counters = o.value("counters").toObject();
    QVERIFY(counters.value("messages_routed").toInt() >= 1);
    QCOMPARE(counters.value("messages_published").toInt(),
             counters.value("messages_routed").toInt() +
                 counters.value("messages_unroutable").toInt() +
                 counters.value("messages_duplicate").toInt() +
                 counters.value("messages_rejected").toInt());
    QVERIFY(counters.value("connections_opened").toInt() >= 3);
    QVERIFY(counters.value("connections_refused").toInt() >= 1); // the access tests
    QVERIFY(counters.value("bytes_received").toInt() > 0);
    for (const char *key : {"messages_published", "messages_delivered", "messages_acknowledged",
                            "bytes_received", "bytes_sent", "interval_ms", "sampled_at"})
        QVERIFY2(o.value("rates").toObject().contains(QLatin1String(key)), key);
    const QJsonObject totals = o.value("totals").toObject();
    QCOMPARE(totals.value("admin_connections").toInt(), 1);
    QVERIFY(totals.value("queues").toInt() >= 1);
    QVERIFY(o.value("process").toObject().value("rss_bytes").toInteger() > 1000000);
    QVERIFY(o.value("process").toObject().value("open_fds").toInt() > 5);
    QVERIFY(o.value("storage").toObject().value("available").toBool());
    QVERIFY(o.value("storage").toObject().value("publish_batches").toInt() >= 1);
    for (const char *list : {"queues", "exchanges", "bindings", "connections"})
        QVERIFY2(o.value(QLatin1String(list)).isArray(), list);
    QVERIFY(o.value("ratelimits").isObject());
}

void tst_Admin::watchAndUnwatch()
{
    TestClient *watcher = adminClient();
    const QJsonObject reply = parseAdminReply(watcher->request("watch 200")).toObject();
    QCOMPARE(reply.value("ok").toBool(), true);
    QCOMPARE(reply.value("interval_ms").toInt(), 200);
    QCOMPARE(reply.value("sections").toArray().size(), 6); // queues … ratelimits, talkers
    // The first snapshot comes at once, the next ones per interval, numbered.
    QElapsedTimer timer;
    timer.start();
    for (int sequence = 1; sequence <= 4; ++sequence) {
        const QByteArray line = watcher->readLine(5000);
        QVERIFY2(line.startsWith("Snapshot: "), line.constData());
        const QJsonObject snapshot = parseAdminReply(line.mid(10)).toObject();
        QCOMPARE(snapshot.value("sequence").toInt(), sequence);
        QVERIFY(snapshot.contains("counters"));
        QVERIFY(snapshot.contains("connections"));
    }
    QVERIFY2(timer.elapsed() >= 550, qPrintable(QString::number(timer.elapsed())));
    // Live: a publish shows up in the snapshots that follow it. The first ones read here may
    // have been taken while the declare and the publish were still on their way (on a loaded
    // machine that is several intervals), so they are read until one shows it.
    ownQueue("watch");
    publish("receiver_1_watch", "watch-1");
    int ready = -1;
    for (QDeadlineTimer deadline(10000); ready != 1 && !deadline.hasExpired();) {
        const QByteArray next = watcher->readLineStartingWith("Snapshot: ", 5000);
        QVERIFY2(!next.isEmpty(), "no snapshot after the publish");
        ready = findBy(parseAdminReply(next.mid(10)).toObject().value("queues").toArray(), "name",
                       QStringLiteral("receiver_1_watch"))
                    .value("ready")
                    .toInt(-1);
    }
    QCOMPARE(ready, 1);
    // Requests still work while watching; replies come between snapshots.
    watcher->send("queues");
    const QByteArray queues = watcher->readLineStartingWith("[", 5000);
    QVERIFY(parseAdminReply(queues).isArray());
    watcher->send("unwatch");
    QList<QByteArray> skipped;
    QCOMPARE(watcher->readLineStartingWith("{", 5000, &skipped),
             QByteArray(R"({"action":"unwatch","ok":true})"));
    for (const QByteArray &line : skipped)
        QVERIFY2(line.startsWith("Snapshot: "), line.constData());
    QVERIFY(watcher->nothingWithin(700));
}

void tst_Admin::watchSections()
{
    TestClient *watcher = adminClient();
    const QJsonObject reply =
        parseAdminReply(watcher->request("watch 100 queues,ratelimits")).toObject();
    QCOMPARE(reply.value("sections").toArray(),
             (QJsonArray{QStringLiteral("queues"), QStringLiteral("ratelimits")}));
    const QJsonObject snapshot = parseAdminReply(watcher->readLine(5000).mid(10)).toObject();
    QVERIFY(snapshot.contains("queues"));
    QVERIFY(snapshot.contains("ratelimits"));
    QVERIFY(snapshot.contains("counters"));
    QVERIFY(!snapshot.contains("connections"));
    QVERIFY(!snapshot.contains("bindings"));
    // A second watch replaces the first.
    watcher->send("watch 60000");
    const QByteArray replaced = watcher->readLineStartingWith("{", 5000);
    QCOMPARE(parseAdminReply(replaced).toObject().value("interval_ms").toInt(), 60000);
    const QJsonObject first = parseAdminReply(watcher->readLine(5000).mid(10)).toObject();
    QCOMPARE(first.value("sequence").toInt(), 1);
    QVERIFY(first.contains("connections"));
    QVERIFY(watcher->nothingWithin(500));
}

void tst_Admin::cmqAdmin_data()
{
    QTest::addColumn<QString>("identity");
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QByteArray>("stdoutHas"); // a piece of what it prints
    QTest::addColumn<QByteArray>("stderrHas");
    QTest::newRow("queues") << "ops-admin" << QStringList{"queues"} << 0
                            << QByteArray("\"name\": \"receiver_1_views\"") << QByteArray();
    QTest::newRow("raw json") << "ops-admin" << QStringList{"--raw", "json"} << 0
                              << QByteArray("\"broker\":{") << QByteArray();
    QTest::newRow("metrics") << "ops-admin" << QStringList{"metrics"} << 0
                             << QByteArray("\n# EOF\n") << QByteArray();
    QTest::newRow("connections") << "ops-admin" << QStringList{"connections"} << 0
                                 << QByteArray("\"listener\": \"admin\"") << QByteArray();
    QTest::newRow("ratelimits") << "ops-admin" << QStringList{"ratelimits"} << 0
                                << QByteArray("\"buckets\"") << QByteArray();
    QTest::newRow("talkers") << "ops-admin" << QStringList{"talkers"} << 0
                             << QByteArray("\"cn\": \"receiver_1\"") << QByteArray();
    QTest::newRow("exchanges") << "ops-admin" << QStringList{"exchanges"} << 0
                               << QByteArray("CipherMQ_exchange") << QByteArray();
    QTest::newRow("bindings") << "ops-admin" << QStringList{"bindings"} << 0
                              << QByteArray("\"routing_key\"") << QByteArray();
    QTest::newRow("help") << "ops-admin" << QStringList{"help"} << 0
                          << QByteArray("\"delete_queue\"") << QByteArray();
    QTest::newRow("purge") << "ops-admin" << QStringList{"purge", "receiver_1_views"} << 0
                           << QByteArray("\"action\": \"purge\"") << QByteArray();
    QTest::newRow("delete_queue") << "ops-admin"
                                  << QStringList{"delete_queue", "receiver_1_metrics"} << 0
                                  << QByteArray("\"messages_dropped\": 4") << QByteArray();
    QTest::newRow("reload") << "ops-admin" << QStringList{"reload"} << 0
                            << QByteArray("\"action\": \"reload\"") << QByteArray();
    QTest::newRow("disconnect unknown")
        << "ops-admin" << QStringList{"disconnect", "999999"} << 1 << QByteArray()
        << QByteArray("Error: Connection 999999 not found");
    QTest::newRow("error reply") << "ops-admin" << QStringList{"purge", "nosuch"} << 1
                                 << QByteArray() << QByteArray("Error: Queue 'nosuch' not found");
    QTest::newRow("bad arguments") << "ops-admin" << QStringList{"watch", "1"} << 2 << QByteArray()
                                   << QByteArray("Invalid interval");
    QTest::newRow("not an admin") << "sender_1" << QStringList{"queues"} << 3 << QByteArray()
                                  << QByteArray("does not have the Admin role");
}

void tst_Admin::cmqAdmin()
{
    QFETCH(QString, identity);
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QByteArray, stdoutHas);
    QFETCH(QByteArray, stderrHas);
    QProcess cmq;
    QStringList all{QStringLiteral("admin"), QStringLiteral("--address"),
                    QStringLiteral("127.0.0.1:%1").arg(m_adminPort)};
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("CMQ_CERT"), certFile(identity + QStringLiteral(".crt")));
    env.insert(QStringLiteral("CMQ_KEY"), certFile(identity + QStringLiteral(".key")));
    env.insert(QStringLiteral("CMQ_CA"), certFile(QStringLiteral("ca.crt")));
    cmq.setProcessEnvironment(env);
    cmq.start(QStringLiteral(CMQ_CLI_BIN), all + args);
    QVERIFY(cmq.waitForFinished(30000));
    const QByteArray out = cmq.readAllStandardOutput();
    const QByteArray err = cmq.readAllStandardError();
    QVERIFY2(cmq.exitCode() == exitCode, (out + err).constData());
    QVERIFY2(out.contains(stdoutHas), out.constData());
    QVERIFY2(err.contains(stderrHas), err.constData());
}

void tst_Admin::cmqAdminWatch()
{
    QProcess cmq;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("CMQ_CERT"), certFile(QStringLiteral("ops-admin.crt")));
    env.insert(QStringLiteral("CMQ_KEY"), certFile(QStringLiteral("ops-admin.key")));
    env.insert(QStringLiteral("CMQ_CA"), certFile(QStringLiteral("ca.crt")));
    env.insert(QStringLiteral("CMQ_ADMIN_ADDRESS"),
               QStringLiteral("127.0.0.1:%1").arg(m_adminPort));
    cmq.setProcessEnvironment(env);
    cmq.start(QStringLiteral(CMQ_CLI_BIN),
              {QStringLiteral("admin"), QStringLiteral("--count"), QStringLiteral("3"),
               QStringLiteral("watch"), QStringLiteral("100"), QStringLiteral("queues")});
    QVERIFY(cmq.waitForFinished(30000));
    QCOMPARE(cmq.exitCode(), 0);
    const QList<QByteArray> lines = cmq.readAllStandardOutput().trimmed().split('\n');
    QCOMPARE(lines.size(), 3);
    for (int i = 0; i < 3; ++i) {
        const QJsonObject snapshot = parseAdminReply(lines[i]).toObject();
        QCOMPARE(snapshot.value("sequence").toInt(), i + 1);
        QVERIFY(snapshot.contains("queues"));
    }
}

QTEST_GUILESS_MAIN(tst_Admin)
#include "tst_10_admin.moc"
