// The two listeners keep to their own commands (docs/ADMIN-PROTOCOL.md): who the data listener
// admits and how it refuses the rest, a client without a certificate, the AdminClient of
// common/ (and its refusal), data-path commands refused on the admin listener and
// admin commands unknown on the data listener, and the admin listener's error replies.

#include <QSignalSpy>

#include "admin/adminclient.h"
#include "tls/tlsidentity.h"

#include "adminfixture.h"

using cmq::test::AdminFixture;
using cmq::test::certFile;
using cmq::test::parseAdminReply;
using cmq::test::TestClient;

class tst_AdminAccess : public QObject, protected AdminFixture
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void noCertificateOnAdminListener();
    void adminClientLibrary();
    void dataListenerAccess_data();
    void dataListenerAccess();
    void dataListenerRefusesAdminCommands_data();
    void dataListenerRefusesAdminCommands();
    void adminListenerRefusesDataCommands_data();
    void adminListenerRefusesDataCommands();
    void errors_data();
    void errors();
};

void tst_AdminAccess::initTestCase()
{
    QVERIFY(startBroker());
}

void tst_AdminAccess::cleanupTestCase()
{
    QVERIFY(stopBroker());
}

void tst_AdminAccess::noCertificateOnAdminListener()
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

void tst_AdminAccess::adminClientLibrary()
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

void tst_AdminAccess::dataListenerAccess_data()
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

void tst_AdminAccess::dataListenerAccess()
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

void tst_AdminAccess::dataListenerRefusesAdminCommands_data()
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

void tst_AdminAccess::dataListenerRefusesAdminCommands()
{
    QFETCH(QString, identity);
    QFETCH(QByteArray, request);
    static QHash<QString, TestClient *> clients;
    TestClient *&client = clients[identity];
    if (!client)
        client = dataClient(identity);
    QCOMPARE(client->request(request), "Unknown command");
}

void tst_AdminAccess::adminListenerRefusesDataCommands_data()
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

void tst_AdminAccess::adminListenerRefusesDataCommands()
{
    QFETCH(QByteArray, request);
    const QByteArray word =
        request.left(request.indexOf(' ') < 0 ? request.size() : request.indexOf(' '));
    QCOMPARE(m_admin->request(request),
             "Error: '" + word +
                 "' is a data-path command; the admin listener accepts only "
                 "admin commands");
}

void tst_AdminAccess::errors_data()
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

void tst_AdminAccess::errors()
{
    QFETCH(QByteArray, request);
    QFETCH(QByteArray, reply);
    QCOMPARE(m_admin->request(request), reply);
}

QTEST_GUILESS_MAIN(tst_AdminAccess)
#include "tst_42_admin_access.moc"
