// The admin listener against the real broker (docs/ADMIN-PROTOCOL.md): who may connect on
// which listener, every admin command against a broker carrying traffic, the metrics text
// checked by promtool, the watch stream, the actions (purge, delete_queue, disconnect) and
// reloading the configuration by command and by SIGHUP; also the AdminClient of common/.

#include <csignal>

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QtTest>

#include "admin/adminclient.h"
#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"
#include "tls/tlsidentity.h"

using cmq::test::BrokerProcess;
using cmq::test::certFile;
using cmq::test::freePort;
using cmq::test::TestClient;

namespace {

QByteArray envelope(const QByteArray &id, const QByteArray &receiver = "receiver_1")
{
    return R"({"message_id":")" + id + R"(","receiver_client_id":")" + receiver +
           R"(","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"Y2lwaGVy"})";
}

QJsonValue parse(const QByteArray &line)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
    if (error.error != QJsonParseError::NoError)
        qWarning("not JSON (%s): %s", qPrintable(error.errorString()), line.left(300).constData());
    return doc.isArray() ? QJsonValue(doc.array()) : QJsonValue(doc.object());
}

QJsonObject findBy(const QJsonArray &array, const QString &field, const QJsonValue &value)
{
    for (const QJsonValue &v : array) {
        if (v.toObject().value(field) == value)
            return v.toObject();
    }
    return {};
}

} // namespace

class tst_Admin : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void adminListenerAccess_data();
    void adminListenerAccess();
    void noCertificateOnAdminListener();
    void dataListenerAccess_data();
    void dataListenerAccess();
    void dataListenerRefusesAdminCommands_data();
    void dataListenerRefusesAdminCommands();
    void adminListenerRefusesDataCommands_data();
    void adminListenerRefusesDataCommands();
    void help();
    void queuesExchangesBindings();
    void connections();
    void rateLimits();
    void metricsPassesPromtool();
    void json();
    void watchAndUnwatch();
    void watchSections();
    void purge();
    void deleteQueue();
    void disconnectDataClient();
    void disconnectAdminClient();
    void errors_data();
    void errors();
    void reloadByCommand();
    void reloadBySighup();
    void reloadWithBrokenFile();
    void pipelinedRequestsKeepOrder();
    void adminClientLibrary();
    void cmqAdmin_data();
    void cmqAdmin();
    void cmqAdminWatch();

private:
    TestClient *dataClient(const QString &identity);
    TestClient *adminClient(const QString &identity = QStringLiteral("ops-admin"));
    QJsonValue ask(const QByteArray &request);
    QByteArray readMetrics(TestClient *client);
    // A queue receiver_1_<name> bound to CipherMQ_exchange with key receiver_1_<name>.
    void ownQueue(const QByteArray &name);
    void publish(const QByteArray &key, const QByteArray &id);

    BrokerProcess m_broker;
    quint16 m_adminPort = 0;
    QList<TestClient *> m_clients;
    TestClient *m_admin = nullptr;
    TestClient *m_sender = nullptr;
};

void tst_Admin::initTestCase()
{
    m_adminPort = freePort();
    m_broker.set("admin.enabled", "true");
    m_broker.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(m_adminPort));
    // ops-admin-2 holds the Admin role but is not in the allow-list.
    m_broker.set("admin.allowed_cns", R"(["ops-admin"])");
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    m_admin = adminClient();
    m_sender = dataClient("sender_1");
    TestClient *receiver = dataClient("receiver_1");
    QCOMPARE(receiver->request("declare_exchange CipherMQ_exchange"), "Exchange declared");
}

void tst_Admin::cleanupTestCase()
{
    qDeleteAll(m_clients);
    QVERIFY(m_broker.terminate());
    QCOMPARE(m_broker.exitCode(), 0);
}

TestClient *tst_Admin::dataClient(const QString &identity)
{
    auto *client = new TestClient(identity);
    m_clients.append(client);
    if (!client->connectTo(m_broker.port()))
        qFatal("cannot connect as %s: %s", qPrintable(identity), qPrintable(client->errorString()));
    return client;
}

TestClient *tst_Admin::adminClient(const QString &identity)
{
    auto *client = new TestClient(identity);
    m_clients.append(client);
    if (!client->connectTo(m_adminPort))
        qFatal("cannot connect to the admin listener as %s: %s", qPrintable(identity),
               qPrintable(client->errorString()));
    return client;
}

QJsonValue tst_Admin::ask(const QByteArray &request)
{
    const QByteArray line = m_admin->request(request);
    if (line.startsWith("Error: "))
        qWarning("%s -> %s", request.constData(), line.constData());
    return parse(line);
}

QByteArray tst_Admin::readMetrics(TestClient *client)
{
    QByteArray text;
    for (;;) {
        const QByteArray line = client->readLine();
        if (line.isNull())
            return text + "<timeout>";
        text += line + '\n';
        if (line == "# EOF" || line.startsWith("Error: "))
            return text;
    }
}

void tst_Admin::ownQueue(const QByteArray &name)
{
    TestClient *receiver = dataClient("receiver_1");
    QCOMPARE(receiver->request("declare_queue receiver_1_" + name), "Queue declared");
    QCOMPARE(receiver->request("bind receiver_1_" + name + " CipherMQ_exchange receiver_1_" + name),
             "Queue bound");
}

void tst_Admin::publish(const QByteArray &key, const QByteArray &id)
{
    QCOMPARE(m_sender->request("publish CipherMQ_exchange " + key + ' ' + envelope(id)),
             "ACK " + id);
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
        QCOMPARE(parse(client.request("help")).toObject().value("commands").toArray().size(), 17);
        return;
    }
    // One error line, then the close; nothing a request could change.
    QCOMPARE(client.readLine(), refusal);
    QVERIFY(client.waitForDisconnected());
    QVERIFY(client.readLine(0).isNull());
}

void tst_Admin::noCertificateOnAdminListener()
{
    TestClient client{QString()};
    // TLS 1.3: the refusal may show only on the first read. Never an answer.
    if (client.connectTo(m_adminPort)) {
        client.send("help");
        const QByteArray line = client.readLine();
        QVERIFY2(line.isNull(), line.constData());
        QVERIFY(client.waitForDisconnected());
    }
    QCOMPARE(client.socket().state(), QAbstractSocket::UnconnectedState);
    m_admin->send("metrics");
    const QByteArray metrics = readMetrics(m_admin);
    QVERIFY2(metrics.contains("ciphermq_tls_handshake_failures_total{listener=\"admin\",reason="),
             metrics.constData());
}

void tst_Admin::dataListenerAccess_data()
{
    // The other half of the matrix: who the data listener admits (an admin too: admins may
    // run data commands), and how it refuses the rest.
    QTest::addColumn<QString>("identity");
    QTest::addColumn<QByteArray>("refusal"); // empty: admitted
    QTest::newRow("admin in allowed_cns") << "ops-admin" << QByteArray();
    QTest::newRow("admin not in allowed_cns") << "ops-admin-2" << QByteArray();
    QTest::newRow("sender") << "sender_1" << QByteArray();
    QTest::newRow("receiver") << "receiver_1" << QByteArray();
    QTest::newRow("unknown CN") << "stranger"
                                << QByteArray("Error: Unauthorized: certificate CN 'stranger' "
                                              "has no role");
    QTest::newRow("no CN") << "nocn"
                           << QByteArray("Error: Unauthorized: the client certificate has no "
                                         "Common Name");
    QTest::newRow("no certificate") << QString() << QByteArray("<handshake>");
}

void tst_Admin::dataListenerAccess()
{
    QFETCH(QString, identity);
    QFETCH(QByteArray, refusal);
    TestClient client{identity};
    if (refusal == "<handshake>") {
        if (client.connectTo(m_broker.port())) {
            client.send("heartbeat 30");
            QVERIFY(client.readLine().isNull());
        }
        QCOMPARE(client.socket().state(), QAbstractSocket::UnconnectedState);
        return;
    }
    QVERIFY2(client.connectTo(m_broker.port()), qPrintable(client.errorString()));
    if (refusal.isEmpty()) {
        QCOMPARE(client.request("heartbeat 30"), "Heartbeat 30");
        return;
    }
    QCOMPARE(client.readLine(), refusal);
    QVERIFY(client.waitForDisconnected());
}

void tst_Admin::dataListenerRefusesAdminCommands_data()
{
    QTest::addColumn<QString>("identity");
    QTest::addColumn<QByteArray>("request");
    for (const char *identity : {"ops-admin", "ops-admin-2", "sender_1", "receiver_1"}) {
        for (const char *request : {"metrics", "json", "queues", "connections", "ratelimits",
                                    "purge receiver_1_queue", "delete_queue receiver_1_queue",
                                    "disconnect 1", "reload", "watch 1000", "unwatch", "help"}) {
            QTest::addRow("%s %s", identity, request)
                << QString::fromLatin1(identity) << QByteArray(request);
        }
    }
}

void tst_Admin::dataListenerRefusesAdminCommands()
{
    QFETCH(QString, identity);
    QFETCH(QByteArray, request);
    static QHash<QString, TestClient *> clients;
    TestClient *&client = clients[identity];
    if (!client)
        client = dataClient(identity);
    QCOMPARE(client->request(request), "Unknown command");
}

void tst_Admin::adminListenerRefusesDataCommands_data()
{
    QTest::addColumn<QByteArray>("request");
    for (const char *request :
         {"declare_queue ops_q", "declare_exchange ex", "bind a b c",
          "publish CipherMQ_exchange k {}", "publish_batch e k []", "consume receiver_1_queue",
          "fetch receiver_1_queue", "ack m1", "nack m1", "resend m1", "register_public_key AAAA",
          "get_public_key receiver_1", "heartbeat 5", "pong", "qos 1"}) {
        QTest::newRow(request) << QByteArray(request);
    }
}

void tst_Admin::adminListenerRefusesDataCommands()
{
    QFETCH(QByteArray, request);
    const QByteArray word =
        request.left(request.indexOf(' ') < 0 ? request.size() : request.indexOf(' '));
    QCOMPARE(m_admin->request(request),
             "Error: '" + word +
                 "' is a data-path command; the admin listener accepts only "
                 "admin commands");
}

void tst_Admin::help()
{
    const QJsonArray commands = ask("help").toObject().value("commands").toArray();
    QStringList names;
    for (const QJsonValue &v : commands)
        names.append(v.toString());
    QCOMPARE(names, (QStringList{"audit", "bindings", "connections", "dead_letters", "delete_queue",
                                 "disconnect", "exchanges", "help", "json", "metrics", "purge",
                                 "queues", "ratelimits", "reload", "requeue", "unwatch", "watch"}));
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
    QCOMPARE(queue.value("bytes").toInt(), 4 * envelope("views-0").size());

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
        QCOMPARE(publisher->request("publish CipherMQ_exchange receiver_1_conn " + envelope(id)),
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
    QVERIFY(pub.value("bytes_in").toInt() > 3 * envelope("conn-0").size());
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
    // m_sender and the refusal matrix's client; others may still be closing.
    QVERIFY2(sender.value("connections").toInt() >= 2,
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
    const QJsonObject reply = parse(watcher->request("watch 200")).toObject();
    QCOMPARE(reply.value("ok").toBool(), true);
    QCOMPARE(reply.value("interval_ms").toInt(), 200);
    QCOMPARE(reply.value("sections").toArray().size(), 5);
    // The first snapshot comes at once, the next ones per interval, numbered.
    QElapsedTimer timer;
    timer.start();
    for (int sequence = 1; sequence <= 4; ++sequence) {
        const QByteArray line = watcher->readLine(5000);
        QVERIFY2(line.startsWith("Snapshot: "), line.constData());
        const QJsonObject snapshot = parse(line.mid(10)).toObject();
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
        ready = findBy(parse(next.mid(10)).toObject().value("queues").toArray(), "name",
                       QStringLiteral("receiver_1_watch"))
                    .value("ready")
                    .toInt(-1);
    }
    QCOMPARE(ready, 1);
    // Requests still work while watching; replies come between snapshots.
    watcher->send("queues");
    const QByteArray queues = watcher->readLineStartingWith("[", 5000);
    QVERIFY(parse(queues).isArray());
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
    const QJsonObject reply = parse(watcher->request("watch 100 queues,ratelimits")).toObject();
    QCOMPARE(reply.value("sections").toArray(),
             (QJsonArray{QStringLiteral("queues"), QStringLiteral("ratelimits")}));
    const QJsonObject snapshot = parse(watcher->readLine(5000).mid(10)).toObject();
    QVERIFY(snapshot.contains("queues"));
    QVERIFY(snapshot.contains("ratelimits"));
    QVERIFY(snapshot.contains("counters"));
    QVERIFY(!snapshot.contains("connections"));
    QVERIFY(!snapshot.contains("bindings"));
    // A second watch replaces the first.
    watcher->send("watch 60000");
    const QByteArray replaced = watcher->readLineStartingWith("{", 5000);
    QCOMPARE(parse(replaced).toObject().value("interval_ms").toInt(), 60000);
    const QJsonObject first = parse(watcher->readLine(5000).mid(10)).toObject();
    QCOMPARE(first.value("sequence").toInt(), 1);
    QVERIFY(first.contains("connections"));
    QVERIFY(watcher->nothingWithin(500));
}

void tst_Admin::purge()
{
    ownQueue("purge");
    for (int i = 0; i < 6; ++i)
        publish("receiver_1_purge", "purge-" + QByteArray::number(i));
    TestClient *consumer = dataClient("receiver_1");
    QCOMPARE(consumer->request("fetch receiver_1_purge").left(17), "Message: purge-0 ");

    const QJsonObject reply = ask("purge receiver_1_purge").toObject();
    QCOMPARE(reply,
             (QJsonObject{
                 {"ok", true}, {"action", "purge"}, {"queue", "receiver_1_purge"}, {"purged", 5}}));
    const QJsonObject queue =
        findBy(ask("queues").toArray(), "name", QStringLiteral("receiver_1_purge"));
    QCOMPARE(queue.value("ready").toInt(), 0);
    QCOMPARE(queue.value("unacked").toInt(), 1); // in the consumer's hands, as in RabbitMQ
    QCOMPARE(consumer->request("fetch receiver_1_purge"), "No messages");
    QCOMPARE(consumer->request("ack purge-0"), "ACK_CONFIRMED purge-0");
    // The queue goes on as usual; purged ids stay known to duplicate detection.
    publish("receiver_1_purge", "purge-6");
    QCOMPARE(consumer->request("fetch receiver_1_purge").left(17), "Message: purge-6 ");
    QCOMPARE(m_admin->request("purge receiver_1_nothing"),
             "Error: Queue 'receiver_1_nothing' not found");
}

void tst_Admin::deleteQueue()
{
    ownQueue("delete");
    TestClient *consumer = dataClient("receiver_1");
    QCOMPARE(consumer->request("consume receiver_1_delete"), "Subscribed to queue");
    publish("receiver_1_delete", "delete-0");
    QCOMPARE(consumer->readLine().left(18), "Message: delete-0 ");
    QCOMPARE(consumer->request("qos 1"), "Qos set to 1");
    publish("receiver_1_delete", "delete-1"); // stays ready: prefetch 1 is used up

    const QJsonObject reply = ask("delete_queue receiver_1_delete").toObject();
    QCOMPARE(reply, (QJsonObject{{"ok", true},
                                 {"action", "delete_queue"},
                                 {"queue", "receiver_1_delete"},
                                 {"messages_dropped", 2},
                                 {"consumers_cancelled", 1},
                                 {"bindings_removed", 1}}));
    QVERIFY(findBy(ask("queues").toArray(), "name", QStringLiteral("receiver_1_delete")).isEmpty());
    QVERIFY(
        findBy(ask("bindings").toArray(), "queue", QStringLiteral("receiver_1_delete")).isEmpty());
    QCOMPARE(consumer->request("ack delete-0"),
             "Error: Message delete-0 is not awaiting acknowledgement from this connection");
    QCOMPARE(
        m_sender->request("publish CipherMQ_exchange receiver_1_delete " + envelope("delete-2")),
        "Error: No queues bound to exchange 'CipherMQ_exchange' with routing key "
        "'receiver_1_delete'");
    // The consumer's connection is still fine; a new queue of that name starts empty.
    QCOMPARE(consumer->request("declare_queue receiver_1_delete"), "Queue declared");
    QCOMPARE(consumer->request("fetch receiver_1_delete"), "No messages");
    QCOMPARE(m_admin->request("delete_queue receiver_1_never"),
             "Error: Queue 'receiver_1_never' not found");
}

void tst_Admin::disconnectDataClient()
{
    TestClient *victim = dataClient("receiver_2");
    QCOMPARE(victim->request("declare_queue receiver_2_victim"), "Queue declared");
    const QJsonObject entry =
        findBy(ask("connections").toArray(), "cn", QStringLiteral("receiver_2"));
    const qint64 id = entry.value("id").toInteger();
    QVERIFY(id > 0);
    const QJsonObject reply = ask("disconnect " + QByteArray::number(id)).toObject();
    QCOMPARE(reply, (QJsonObject{{"ok", true},
                                 {"action", "disconnect"},
                                 {"connection_id", id},
                                 {"cn", "receiver_2"},
                                 {"listener", "data"}}));
    QCOMPARE(victim->readLine(), "Error: Disconnected by an administrator");
    QVERIFY(victim->waitForDisconnected());
    QTRY_VERIFY(findBy(ask("connections").toArray(), "id", id).isEmpty());
}

void tst_Admin::disconnectAdminClient()
{
    TestClient *other = adminClient();
    QVERIFY(other->request("help").startsWith("{")); // admitted by now
    const QJsonArray all = ask("connections").toArray();
    qint64 id = 0;
    for (const QJsonValue &v : all) {
        const QJsonObject o = v.toObject();
        if (o.value("listener") == QStringLiteral("admin") &&
            o.value("port").toInt() == int(other->socket().localPort()))
            id = o.value("id").toInteger();
    }
    QVERIFY(id > 0);
    QCOMPARE(ask("disconnect " + QByteArray::number(id)).toObject().value("listener").toString(),
             QStringLiteral("admin"));
    QCOMPARE(other->readLine(), "Notice: Disconnected by an administrator");
    QVERIFY(other->waitForDisconnected());
    // Disconnecting yourself: the reply first, then the notice.
    TestClient *self = adminClient();
    qint64 selfId = 0;
    for (const QJsonValue &v : parse(self->request("connections")).toArray()) {
        if (v.toObject().value("port").toInt() == int(self->socket().localPort()) &&
            v.toObject().value("listener") == QStringLiteral("admin"))
            selfId = v.toObject().value("id").toInteger();
    }
    QVERIFY(parse(self->request("disconnect " + QByteArray::number(selfId)))
                .toObject()
                .value("ok")
                .toBool());
    QCOMPARE(self->readLine(), "Notice: Disconnected by an administrator");
    QVERIFY(self->waitForDisconnected());
}

void tst_Admin::errors_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<QByteArray>("reply");
    QTest::newRow("unknown") << QByteArray("stats")
                             << QByteArray("Error: Unknown admin command 'stats' (try help)");
    QTest::newRow("purge missing")
        << QByteArray("purge") << QByteArray("Error: Missing queue name");
    QTest::newRow("purge unknown")
        << QByteArray("purge nosuch") << QByteArray("Error: Queue 'nosuch' not found");
    QTest::newRow("disconnect unknown")
        << QByteArray("disconnect 999999") << QByteArray("Error: Connection 999999 not found");
    QTest::newRow("disconnect bad")
        << QByteArray("disconnect x") << QByteArray("Error: Invalid connection id 'x'");
    QTest::newRow("watch bad") << QByteArray("watch 5")
                               << QByteArray("Error: Invalid interval: expected milliseconds "
                                             "from 100 to 60000");
    QTest::newRow("invalid utf-8")
        << QByteArray("queues \xff") << QByteArray("Error: Invalid UTF-8 in request line");
}

void tst_Admin::errors()
{
    QFETCH(QByteArray, request);
    QFETCH(QByteArray, reply);
    QCOMPARE(m_admin->request(request), reply);
}

void tst_Admin::reloadByCommand()
{
    TestClient *doomed = dataClient("receiver_2");
    QCOMPARE(doomed->request("declare_queue receiver_2_q"), "Queue declared");
    TestClient *both = dataClient("both-svc");
    QCOMPARE(both->request("get_public_key nobody"), "Public key not found");

    // receiver_2 loses its role, both-svc keeps only receiver, ops-admin-2 becomes allowed,
    // the rate limits change; the admin address is not reloadable.
    m_broker.set("acl.receiver_cns", R"(["worker-svc-1", "receiver_1", "both-svc", "svc-a"])");
    m_broker.set("acl.sender_cns", R"(["publisher-svc-1", "sender_1", "svc-a"])");
    m_broker.set("admin.allowed_cns", R"(["ops-admin", "ops-admin-2"])");
    m_broker.set("rate_limit.global_rps", "321.0");
    m_broker.set("server.max_line_bytes", "2048");
    m_broker.writeConfig();
    const QJsonObject reply = ask("reload").toObject();
    QCOMPARE(reply.value("ok").toBool(), true);
    QCOMPARE(reply.value("connections_closed").toInt(), 1);
    QVERIFY(reply.value("connections_updated").toInt() >= 1);
    QCOMPARE(reply.value("admin_allowed_cns").toInt(), 2);
    QCOMPARE(reply.value("acl").toObject().value("receiver_cns").toInt(), 4);
    QCOMPARE(reply.value("rate_limit").toObject().value("global_rps").toDouble(), 321.0);
    QCOMPARE(reply.value("restart_required").toArray(),
             QJsonArray{QStringLiteral("server.max_line_bytes")});
    // The TLS material in force: the test broker's certificate, no CRL.
    const QList<QSslCertificate> serverCertificate =
        QSslCertificate::fromPath(cmq::test::certFile(QStringLiteral("server.crt")));
    QVERIFY(!serverCertificate.isEmpty());
    const QJsonObject tls = reply.value("tls").toObject();
    QCOMPARE(tls.value("certificate_serial").toString().toLatin1(),
             serverCertificate.constFirst().serialNumber());
    QCOMPARE(tls.value("certificate_not_after").toString(),
             serverCertificate.constFirst().expiryDate().toUTC().toString(Qt::ISODate));
    QCOMPARE(tls.value("revoked_serials").toInt(), 0);

    QCOMPARE(doomed->readLine(),
             "Error: Unauthorized: certificate CN 'receiver_2' no longer has a role");
    QVERIFY(doomed->waitForDisconnected());
    QCOMPARE(both->request("get_public_key nobody"),
             "Error: Permission denied: 'get_public_key' is not allowed for role receiver");
    TestClient admin2("ops-admin-2");
    QVERIFY(admin2.connectTo(m_adminPort));
    QVERIFY(parse(admin2.request("help")).toObject().contains("commands"));
    QCOMPARE(
        ask("ratelimits").toObject().value("settings").toObject().value("global_rps").toDouble(),
        321.0);
    TestClient refused("receiver_2");
    QVERIFY(refused.connectTo(m_broker.port()));
    QCOMPARE(refused.readLine(), "Error: Unauthorized: certificate CN 'receiver_2' has no role");
}

void tst_Admin::reloadBySighup()
{
    TestClient *admin2 = adminClient("ops-admin-2");
    QVERIFY(parse(admin2->request("help")).toObject().contains("commands"));
    m_broker.set("admin.allowed_cns", R"(["ops-admin"])");
    m_broker.writeConfig();
    QVERIFY(::kill(pid_t(m_broker.pid()), SIGHUP) == 0);
    QCOMPARE(admin2->readLine(), "Notice: Access revoked by a configuration reload");
    QVERIFY(admin2->waitForDisconnected());
    QCOMPARE(m_admin->request("help").left(12), "{\"commands\":");
}

void tst_Admin::reloadWithBrokenFile()
{
    const QString path = m_broker.writeConfig();
    QFile file(path);
    QVERIFY(file.open(QIODevice::Append));
    file.write("\n[rate_limit]\nglobal_rps = -1\n");
    file.close();
    const QByteArray reply = m_admin->request("reload");
    QVERIFY2(reply.startsWith("Error: Reload failed: " + path.toUtf8() + ":"), reply.constData());
    QVERIFY2(reply.endsWith("; the running configuration is unchanged"), reply.constData());
    QCOMPARE(
        ask("ratelimits").toObject().value("settings").toObject().value("global_rps").toDouble(),
        321.0);
    m_broker.writeConfig(); // a good file again for whoever comes next
}

void tst_Admin::pipelinedRequestsKeepOrder()
{
    // A purge waits for its commit; the requests behind it wait for it.
    ownQueue("order");
    publish("receiver_1_order", "order-1");
    m_admin->sendRaw("purge receiver_1_order\nhelp\npurge receiver_1_order\nqueues\n");
    QCOMPARE(parse(m_admin->readLine()).toObject().value("purged").toInt(), 1);
    QVERIFY(parse(m_admin->readLine()).toObject().contains("commands"));
    QCOMPARE(parse(m_admin->readLine()).toObject().value("purged").toInt(), 0);
    QVERIFY(parse(m_admin->readLine()).isArray());
}

void tst_Admin::adminClientLibrary()
{
    using cmq::admin::AdminClient;
    using cmq::admin::AdminReply;
    const auto tls = cmq::tls::clientConfiguration(
        {certFile("ops-admin.crt"), certFile("ops-admin.key"), certFile("ca.crt")});
    QVERIFY(tls);
    AdminClient client;
    client.setSslConfiguration(tls.value());
    client.connectToBroker(QStringLiteral("localhost"), m_adminPort);
    QVERIFY(client.waitForConnected(15000));

    const auto queues = client.request(QStringLiteral("queues"), 15000);
    QVERIFY2(queues, qPrintable(queues.error()));
    QVERIFY(queues->ok);
    QVERIFY(queues->json().isArray());
    const auto metrics = client.request(QStringLiteral("metrics"), 15000);
    QVERIFY(metrics && metrics->ok);
    QVERIFY(metrics->body.endsWith("# EOF\n"));
    const auto missing = client.request(QStringLiteral("purge nosuch"), 15000);
    QVERIFY(missing && !missing->ok);
    QCOMPARE(missing->error, QStringLiteral("Queue 'nosuch' not found"));
    QCOMPARE(AdminClient::validate(QStringLiteral("watch 1")),
             QStringLiteral("Invalid interval: expected milliseconds from 100 to 60000"));

    QSignalSpy snapshots(&client, &AdminClient::snapshotReceived);
    QSignalSpy replies(&client, &AdminClient::replyReceived);
    const quint64 id = client.send(QStringLiteral("watch 100 queues"));
    QVERIFY(id > 0);
    QTRY_COMPARE_WITH_TIMEOUT(snapshots.size() >= 3, true, 10000);
    QCOMPARE(replies.size(), 1);
    QCOMPARE(replies.first().at(0).toULongLong(), id);
    QVERIFY(snapshots.first().at(0).toJsonObject().contains("queues"));

    // A refused identity: the error arrives as a signal, then the close.
    const auto senderTls = cmq::tls::clientConfiguration(
        {certFile("sender_1.crt"), certFile("sender_1.key"), certFile("ca.crt")});
    AdminClient refused;
    refused.setSslConfiguration(senderTls.value());
    QSignalSpy errors(&refused, &AdminClient::errorOccurred);
    QSignalSpy closed(&refused, &AdminClient::disconnected);
    refused.connectToBroker(QStringLiteral("localhost"), m_adminPort);
    QTRY_COMPARE_WITH_TIMEOUT(closed.size(), 1, 15000);
    QVERIFY(!errors.isEmpty());
    QCOMPARE(
        errors.first().at(0).toString(),
        QStringLiteral("Unauthorized: certificate CN 'sender_1' does not have the Admin role"));
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
        const QJsonObject snapshot = parse(lines[i]).toObject();
        QCOMPARE(snapshot.value("sequence").toInt(), i + 1);
        QVERIFY(snapshot.contains("queues"));
    }
}

QTEST_GUILESS_MAIN(tst_Admin)
#include "tst_10_admin.moc"
