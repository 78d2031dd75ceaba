// The admin listener's actions against the real broker (docs/ADMIN-PROTOCOL.md): purge,
// delete_queue, disconnect of data and admin connections, reloading the configuration by
// command and by SIGHUP (and refusing a broken file), and requests pipelined behind an action.

#include <csignal>

#include <QFile>
#include <QSslCertificate>

#include "adminfixture.h"

using cmq::test::AdminFixture;
using cmq::test::adminTestEnvelope;
using cmq::test::findBy;
using cmq::test::parseAdminReply;
using cmq::test::TestClient;

class tst_AdminActions : public QObject, protected AdminFixture
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void purge();
    void deleteQueue();
    void disconnectDataClient();
    void disconnectAdminClient();
    void reloadByCommand();
    void reloadBySighup();
    void reloadWithBrokenFile();
    void pipelinedRequestsKeepOrder();
};

void tst_AdminActions::initTestCase()
{
    QVERIFY(startBroker());
}

void tst_AdminActions::cleanupTestCase()
{
    QVERIFY(stopBroker());
}

void tst_AdminActions::purge()
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

void tst_AdminActions::deleteQueue()
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
    QCOMPARE(m_sender->request("publish CipherMQ_exchange receiver_1_delete " +
                               adminTestEnvelope("delete-2")),
             "Error: No queues bound to exchange 'CipherMQ_exchange' with routing key "
             "'receiver_1_delete'");
    // The consumer's connection is still fine; a new queue of that name starts empty.
    QCOMPARE(consumer->request("declare_queue receiver_1_delete"), "Queue declared");
    QCOMPARE(consumer->request("fetch receiver_1_delete"), "No messages");
    QCOMPARE(m_admin->request("delete_queue receiver_1_never"),
             "Error: Queue 'receiver_1_never' not found");
}

void tst_AdminActions::disconnectDataClient()
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

void tst_AdminActions::disconnectAdminClient()
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
    for (const QJsonValue &v : parseAdminReply(self->request("connections")).toArray()) {
        if (v.toObject().value("port").toInt() == int(self->socket().localPort()) &&
            v.toObject().value("listener") == QStringLiteral("admin"))
            selfId = v.toObject().value("id").toInteger();
    }
    QVERIFY(parseAdminReply(self->request("disconnect " + QByteArray::number(selfId)))
                .toObject()
                .value("ok")
                .toBool());
    QCOMPARE(self->readLine(), "Notice: Disconnected by an administrator");
    QVERIFY(self->waitForDisconnected());
}

void tst_AdminActions::reloadByCommand()
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
    QVERIFY(parseAdminReply(admin2.request("help")).toObject().contains("commands"));
    QCOMPARE(
        ask("ratelimits").toObject().value("settings").toObject().value("global_rps").toDouble(),
        321.0);
    TestClient refused("receiver_2");
    QVERIFY(refused.connectTo(m_broker.port()));
    QCOMPARE(refused.readLine(), "Error: Unauthorized: certificate CN 'receiver_2' has no role");
}

void tst_AdminActions::reloadBySighup()
{
    TestClient *admin2 = adminClient("ops-admin-2");
    QVERIFY(parseAdminReply(admin2->request("help")).toObject().contains("commands"));
    m_broker.set("admin.allowed_cns", R"(["ops-admin"])");
    m_broker.writeConfig();
    QVERIFY(::kill(pid_t(m_broker.pid()), SIGHUP) == 0);
    QCOMPARE(admin2->readLine(), "Notice: Access revoked by a configuration reload");
    QVERIFY(admin2->waitForDisconnected());
    QCOMPARE(m_admin->request("help").left(12), "{\"commands\":");
}

void tst_AdminActions::reloadWithBrokenFile()
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

void tst_AdminActions::pipelinedRequestsKeepOrder()
{
    // A purge waits for its commit; the requests behind it wait for it.
    ownQueue("order");
    publish("receiver_1_order", "order-1");
    m_admin->sendRaw("purge receiver_1_order\nhelp\npurge receiver_1_order\nqueues\n");
    QCOMPARE(parseAdminReply(m_admin->readLine()).toObject().value("purged").toInt(), 1);
    QVERIFY(parseAdminReply(m_admin->readLine()).toObject().contains("commands"));
    QCOMPARE(parseAdminReply(m_admin->readLine()).toObject().value("purged").toInt(), 0);
    QVERIFY(parseAdminReply(m_admin->readLine()).isArray());
}

QTEST_GUILESS_MAIN(tst_AdminActions)
#include "tst_46_admin_actions.moc"
