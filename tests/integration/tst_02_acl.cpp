// The ACL against the real broker (docs/ACL.md): every cell of the command matrix over the wire
// as a sender, a receiver, an admin and a CN that is both sender and receiver; the receivers'
// queue and routing-key namespace; and an unknown CN refused at connect time.

#include <QtTest>

#include <memory>

#include "brokerprocess.h"
#include "testclient.h"

using cmq::test::BrokerProcess;
using cmq::test::TestClient;

namespace {

QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id + R"(","receiver_client_id":"receiver_1",)" +
           R"("enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"Y2lwaGVy"})";
}

QByteArray delivery(const QByteArray &id)
{
    return "Message: " + id + " " + envelope(id);
}

QByteArray denied(const char *command, const char *role)
{
    return QByteArray("Error: Permission denied: '") + command + "' is not allowed for role " +
           role;
}

QByteArray queueDenied(const QByteArray &queue, const QByteArray &cn)
{
    return "Error: Permission denied: queue '" + queue + "' is outside the namespace of " + cn +
           " (receivers use queues named '" + cn + "_...')";
}

QByteArray keyDenied(const QByteArray &key, const QByteArray &cn)
{
    return "Error: Permission denied: routing key '" + key + "' must be " + cn + " or start with " +
           cn + "_";
}

const QByteArray kKey = QByteArray(32, '\x42').toBase64();      // receiver_2's, set up front
const QByteArray kOtherKey = QByteArray(32, '\x17').toBase64(); // registered by matrix rows
const QByteArray kExchange = "CipherMQ_exchange";
const QByteArray kDump = "receiver_1_acl_dump"; // where the matrix's publishes go

// The identities of the matrix, with the queue prefix each may use (admins: any name).
struct Who
{
    const char *cn;
    const char *role;  // as the denial line names it
    const char *queue; // prefix of the queues its rows use
    bool sends;        // the sender column of the matrix applies (or admin: everything)
    bool receives;
    bool admin;
};
constexpr Who kSender{"sender_1", "sender", "sender_1_", true, false, false};
constexpr Who kReceiver{"receiver_1", "receiver", "receiver_1_", false, true, false};
constexpr Who kAdmin{"ops-admin", "admin", "acl_admin_", true, true, true};
constexpr Who kBoth{"both-svc", "sender,receiver", "both-svc_", true, true, false};

} // namespace

class tst_Acl : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void commandMatrix_data();
    void commandMatrix();
    void resourceRules_data();
    void resourceRules();
    void receiverCannotReadAnothersQueue();
    void deniedCommandsHaveNoEffect();
    void adminUsesAnyQueueAndKey();
    void exchangeRedeclaration();
    void unknownCnRefusedAtConnect();
    void queueOwnerOutlivesAclChange();

private:
    std::unique_ptr<TestClient> connect(const QString &identity);
    // Declared and bound (routing key = queue name) by `who`.
    void ownQueue(const QByteArray &queue, const QString &who);
    void publish(const QByteArray &routingKey, const QByteArray &id);
    BrokerProcess m_broker;
};

void tst_Acl::initTestCase()
{
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    std::unique_ptr<TestClient> receiver = connect("receiver_1");
    QCOMPARE(receiver->request("declare_exchange " + kExchange), "Exchange declared");

    // State the matrix rows need; each row has queues and message ids of its own.
    ownQueue(kDump, "receiver_1");
    for (const Who &who : {kReceiver, kAdmin, kBoth}) {
        const QByteArray prefix = who.queue;
        const QString cn = QString::fromLatin1(who.cn);
        QCOMPARE(connect(cn)->request("declare_queue " + prefix + "bind"), "Queue declared");
        for (const char *use : {"fetch", "ack", "nack"}) {
            ownQueue(prefix + use, cn);
            publish(prefix + use, QByteArray(who.role).replace(',', '+') + "-" + use);
        }
    }
    publish(kDump, "resend-by-sender_1");
    QCOMPARE(connect("receiver_2")->request("register_public_key " + kKey),
             "Public key registered");

    // Another receiver's queue, holding a message, for the resource rules.
    ownQueue("receiver_2_owned", "receiver_2");
    publish("receiver_2_owned", "for-receiver_2");
    ownQueue("receiver_1_res", "receiver_1");
}

void tst_Acl::cleanupTestCase()
{
    QVERIFY(m_broker.terminate());
}

std::unique_ptr<TestClient> tst_Acl::connect(const QString &identity)
{
    auto client = std::make_unique<TestClient>(identity);
    if (!client->connectTo(m_broker.port()))
        qFatal("cannot connect as %s: %s", qPrintable(identity), qPrintable(client->errorString()));
    return client;
}

void tst_Acl::ownQueue(const QByteArray &queue, const QString &who)
{
    std::unique_ptr<TestClient> client = connect(who);
    QCOMPARE(client->request("declare_queue " + queue), "Queue declared");
    QCOMPARE(client->request("bind " + queue + " " + kExchange + " " + queue), "Queue bound");
}

void tst_Acl::publish(const QByteArray &routingKey, const QByteArray &id)
{
    QCOMPARE(connect("sender_1")
                 ->request("publish " + kExchange + " " + routingKey + " " + envelope(id)),
             "ACK " + id);
}

// A row is a short script on one fresh connection: requests in order, each with the exact
// line it must get back (empty: no line at all). The last request is the matrix cell; any
// before it create the state its success needs (a delivery to ack, a message to resend).
void tst_Acl::commandMatrix_data()
{
    QTest::addColumn<QString>("identity");
    QTest::addColumn<QByteArrayList>("requests");
    QTest::addColumn<QByteArrayList>("replies");

    const auto row = [](const Who &who, const char *command, QByteArrayList requests,
                        QByteArrayList replies) {
        QTest::addRow("%s/%s", command, who.role)
            << QString::fromLatin1(who.cn) << requests << replies;
    };
    const auto deny = [&row](const Who &who, const char *command, const QByteArray &request) {
        row(who, command, {request}, {denied(command, who.role)});
    };

    for (const Who &who : {kSender, kReceiver, kAdmin, kBoth}) {
        const bool sends = who.sends;
        const bool receives = who.receives;
        const QByteArray q = who.queue;
        const QByteArray tag = QByteArray(who.role).replace(',', '+');

        // Topology.
        if (receives) {
            row(who, "declare_queue", {"declare_queue " + q + "declared"}, {"Queue declared"});
            row(who, "declare_exchange", {"declare_exchange " + q + "exchange"},
                {"Exchange declared"});
            row(who, "bind", {"bind " + q + "bind " + kExchange + " " + q + "bind"},
                {"Queue bound"});
            row(who, "queue_policy",
                {"declare_queue " + q + "policy", "queue_policy " + q + "policy 10 reject-publish"},
                {"Queue declared", "Queue policy set"});
        } else {
            deny(who, "declare_queue", "declare_queue " + q + "declared");
            deny(who, "declare_exchange", "declare_exchange " + q + "exchange");
            deny(who, "bind", "bind " + kDump + " " + kExchange + " " + kDump);
            deny(who, "queue_policy", "queue_policy " + kDump + " 10 drop-head");
        }

        // Publishing.
        const QByteArray pubId = "pub-" + tag;
        const QByteArray batchId = "batch-" + tag;
        if (sends) {
            row(who, "publish", {"publish " + kExchange + " " + kDump + " " + envelope(pubId)},
                {"ACK " + pubId});
            row(who, "publish_batch",
                {"publish_batch " + kExchange + " " + kDump + " [" + envelope(batchId) + "]"},
                {"ACK " + batchId});
        } else {
            deny(who, "publish", "publish " + kExchange + " " + kDump + " " + envelope(pubId));
            deny(who, "publish_batch",
                 "publish_batch " + kExchange + " " + kDump + " [" + envelope(batchId) + "]");
        }

        // Receiving: each identity reads queues of its own, filled by initTestCase.
        if (receives) {
            row(who, "consume", {"consume " + q + "consume"}, {"Subscribed to queue"});
            row(who, "fetch", {"fetch " + q + "fetch"}, {delivery(tag + "-fetch")});
            row(who, "ack", {"fetch " + q + "ack", "ack " + tag + "-ack"},
                {delivery(tag + "-ack"), "ACK_CONFIRMED " + tag + "-ack"});
            row(who, "nack", {"fetch " + q + "nack", "nack " + tag + "-nack"},
                {delivery(tag + "-nack"), "NACK_CONFIRMED " + tag + "-nack"});
            row(who, "qos", {"qos 5"}, {"Qos set to 5"});
        } else {
            deny(who, "consume", "consume " + kDump);
            deny(who, "fetch", "fetch " + kDump);
            // A sender may ack (the original allowed it) but never holds a delivery: the
            // router's answer, not the ACL's, proves the command ran.
            row(who, "ack", {"ack resend-by-sender_1"},
                {"Error: Message resend-by-sender_1 is not awaiting acknowledgement from this "
                 "connection"});
            deny(who, "nack", "nack resend-by-sender_1");
            deny(who, "qos", "qos 5");
        }

        // Resend: a sender of its own message; an admin of anyone's; a receiver runs it but
        // the message is not its own.
        if (who.admin) {
            row(who, "resend", {"resend resend-by-sender_1"}, {"Resend requested"});
        } else if (sends) {
            const QByteArray id = "resend-" + tag;
            row(who, "resend",
                {"publish " + kExchange + " " + kDump + " " + envelope(id), "resend " + id},
                {"ACK " + id, "Resend requested"});
        } else {
            row(who, "resend", {"resend resend-by-sender_1"}, {"Unauthorized resend request"});
        }

        // Keys.
        if (receives)
            row(who, "register_public_key", {"register_public_key " + kOtherKey},
                {"Public key registered"});
        else
            deny(who, "register_public_key", "register_public_key " + kOtherKey);
        if (sends)
            row(who, "get_public_key", {"get_public_key receiver_2"}, {"Public key: " + kKey});
        else
            deny(who, "get_public_key", "get_public_key receiver_2");

        // Liveness, open to every role. pong has no reply: the heartbeat's reply coming first
        // shows that nothing (no refusal) answered the pong.
        row(who, "heartbeat", {"heartbeat 30"}, {"Heartbeat 30"});
        row(who, "pong", {"pong", "heartbeat 31"}, {"", "Heartbeat 31"});
    }
}

void tst_Acl::commandMatrix()
{
    QFETCH(QString, identity);
    QFETCH(QByteArrayList, requests);
    QFETCH(QByteArrayList, replies);
    QCOMPARE(requests.size(), replies.size());
    std::unique_ptr<TestClient> client = connect(identity);
    for (qsizetype i = 0; i < requests.size(); ++i) {
        client->send(requests[i]);
        if (!replies[i].isEmpty())
            QCOMPARE(client->readLine(), replies[i]);
    }
    QVERIFY2(client->nothingWithin(100), "an unexpected extra line");
}

void tst_Acl::resourceRules_data()
{
    QTest::addColumn<QString>("identity");
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<QByteArray>("reply");
    const QByteArray r1 = "receiver_1";
    const QByteArray ex = " " + kExchange + " ";

    QTest::newRow("declare another's queue")
        << "receiver_1" << QByteArray("declare_queue receiver_2_queue")
        << queueDenied("receiver_2_queue", r1);
    QTest::newRow("declare a longer cn's queue")
        << "receiver_1" << QByteArray("declare_queue receiver_10_queue")
        << queueDenied("receiver_10_queue", r1);
    QTest::newRow("declare cn_ alone") << "receiver_1" << QByteArray("declare_queue receiver_1_")
                                       << queueDenied("receiver_1_", r1);
    QTest::newRow("declare cn alone")
        << "receiver_1" << QByteArray("declare_queue receiver_1") << queueDenied("receiver_1", r1);
    QTest::newRow("declare a shared name")
        << "receiver_1" << QByteArray("declare_queue orders") << queueDenied("orders", r1);
    QTest::newRow("declare own queue")
        << "receiver_1" << QByteArray("declare_queue receiver_1_res2")
        << QByteArray("Queue declared");
    QTest::newRow("bind another's queue")
        << "receiver_1"
        << "bind receiver_2_owned" + ex + "receiver_1_key" << queueDenied("receiver_2_owned", r1);
    // The queue is checked before the key, and before whether the queue exists.
    QTest::newRow("bind another's queue and key")
        << "receiver_1"
        << "bind receiver_2_owned" + ex + "receiver_2_owned" << queueDenied("receiver_2_owned", r1);
    QTest::newRow("bind another's missing queue")
        << "receiver_1"
        << "bind receiver_2_missing" + ex + "receiver_1_key"
        << queueDenied("receiver_2_missing", r1);
    QTest::newRow("bind another's key")
        << "receiver_1"
        << "bind receiver_1_res" + ex + "receiver_2_key" << keyDenied("receiver_2_key", r1);
    QTest::newRow("bind a longer cn's key")
        << "receiver_1"
        << "bind receiver_1_res" + ex + "receiver_10_key" << keyDenied("receiver_10_key", r1);
    QTest::newRow("bind a shared key")
        << "receiver_1"
        << "bind receiver_1_res" + ex + "orders" << keyDenied("orders", r1);
    QTest::newRow("bind own key") << "receiver_1"
                                  << "bind receiver_1_res" + ex + "receiver_1_key"
                                  << QByteArray("Queue bound");
    QTest::newRow("bind the cn as key")
        << "receiver_1"
        << "bind receiver_1_res" + ex + "receiver_1" << QByteArray("Queue bound");
    QTest::newRow("consume another's queue")
        << "receiver_1" << QByteArray("consume receiver_2_owned")
        << queueDenied("receiver_2_owned", r1);
    QTest::newRow("fetch another's queue") << "receiver_1" << QByteArray("fetch receiver_2_owned")
                                           << queueDenied("receiver_2_owned", r1);
    QTest::newRow("both-svc declares a receiver's queue")
        << "both-svc" << QByteArray("declare_queue receiver_1_x")
        << queueDenied("receiver_1_x", "both-svc");
    QTest::newRow("both-svc binds a receiver's key")
        << "both-svc"
        << "bind both-svc_bind" + ex + "receiver_1_key" << keyDenied("receiver_1_key", "both-svc");
}

void tst_Acl::resourceRules()
{
    QFETCH(QString, identity);
    QFETCH(QByteArray, request);
    QFETCH(QByteArray, reply);
    QCOMPARE(connect(identity)->request(request), reply);
}

void tst_Acl::receiverCannotReadAnothersQueue()
{
    // receiver_2_owned holds a message. receiver_1's attempts are refused and take nothing; a
    // refused consume does not subscribe (nothing is pushed when more arrives).
    std::unique_ptr<TestClient> thief = connect("receiver_1");
    QCOMPARE(thief->request("consume receiver_2_owned"),
             queueDenied("receiver_2_owned", "receiver_1"));
    QCOMPARE(thief->request("fetch receiver_2_owned"),
             queueDenied("receiver_2_owned", "receiver_1"));
    publish("receiver_2_owned", "for-receiver_2-later");
    QVERIFY(thief->nothingWithin(300));

    std::unique_ptr<TestClient> owner = connect("receiver_2");
    QCOMPARE(owner->request("fetch receiver_2_owned"), delivery("for-receiver_2"));
    QCOMPARE(owner->request("fetch receiver_2_owned"), delivery("for-receiver_2-later"));
    QCOMPARE(owner->request("ack for-receiver_2"), "ACK_CONFIRMED for-receiver_2");
    QCOMPARE(owner->request("ack for-receiver_2-later"), "ACK_CONFIRMED for-receiver_2-later");
    // Nor can the thief ack what was delivered to the owner.
    QCOMPARE(thief->request("ack for-receiver_2"),
             "Error: Message for-receiver_2 is not awaiting acknowledgement from this connection");
}

void tst_Acl::deniedCommandsHaveNoEffect()
{
    // A refused declare creates nothing: binding the name afterwards finds no queue.
    QCOMPARE(connect("sender_1")->request("declare_queue receiver_1_by_sender"),
             denied("declare_queue", "sender"));
    QCOMPARE(connect("receiver_2")->request("consume receiver_1_by_receiver_2"),
             queueDenied("receiver_1_by_receiver_2", "receiver_2"));
    std::unique_ptr<TestClient> receiver = connect("receiver_1");
    QCOMPARE(receiver->request("bind receiver_1_by_sender " + kExchange + " receiver_1_k"),
             "Error: Queue 'receiver_1_by_sender' not found");
    QCOMPARE(receiver->request("bind receiver_1_by_receiver_2 " + kExchange + " receiver_1_k"),
             "Error: Queue 'receiver_1_by_receiver_2' not found");
    // A refused publish queues nothing; a refused binding routes nothing.
    ownQueue("receiver_1_quiet", "receiver_1");
    QCOMPARE(receiver->request("publish " + kExchange + " receiver_1_quiet " + envelope("nope-1")),
             denied("publish", "receiver"));
    QCOMPARE(receiver->request("bind receiver_1_quiet " + kExchange + " receiver_2_owned"),
             keyDenied("receiver_2_owned", "receiver_1"));
    publish("receiver_2_owned", "for-receiver_2-only");
    QCOMPARE(receiver->request("fetch receiver_1_quiet"), "No messages");
    std::unique_ptr<TestClient> owner = connect("receiver_2");
    QCOMPARE(owner->request("fetch receiver_2_owned"), delivery("for-receiver_2-only"));
    QCOMPARE(owner->request("ack for-receiver_2-only"), "ACK_CONFIRMED for-receiver_2-only");
}

void tst_Acl::adminUsesAnyQueueAndKey()
{
    std::unique_ptr<TestClient> admin = connect("ops-admin");
    QCOMPARE(admin->request("declare_queue receiver_2_admin_made"), "Queue declared");
    QCOMPARE(admin->request("bind receiver_2_admin_made " + kExchange + " any_key_at_all"),
             "Queue bound");
    publish("any_key_at_all", "admin-any");
    QCOMPARE(admin->request("fetch receiver_2_admin_made"), delivery("admin-any"));
    QCOMPARE(admin->request("ack admin-any"), "ACK_CONFIRMED admin-any");
}

void tst_Acl::exchangeRedeclaration()
{
    // Re-declaring an existing exchange succeeds for anyone allowed to declare, whoever made
    // it: every existing receiver declares the shared CipherMQ_exchange on start.
    QCOMPARE(connect("receiver_2")->request("declare_exchange " + kExchange), "Exchange declared");
    QCOMPARE(connect("both-svc")->request("declare_exchange " + kExchange), "Exchange declared");
    QCOMPARE(connect("ops-admin")->request("declare_exchange " + kExchange), "Exchange declared");
    QCOMPARE(connect("sender_1")->request("declare_exchange " + kExchange),
             denied("declare_exchange", "sender"));
    // Still the same exchange: existing bindings keep routing.
    publish(kDump, "after-redeclare");
}

void tst_Acl::unknownCnRefusedAtConnect()
{
    // The handshake succeeds (the certificate is signed by our CA); then one error line and
    // the close, before any command is read.
    TestClient stranger("stranger");
    QVERIFY2(stranger.connectTo(m_broker.port()), qPrintable(stranger.errorString()));
    stranger.send("get_public_key receiver_2");
    QCOMPARE(stranger.readLine(), "Error: Unauthorized: certificate CN 'stranger' has no role");
    QVERIFY(stranger.waitForDisconnected());
    QVERIFY(stranger.readLine(1000).isNull());
    // The broker carries on for others.
    QCOMPARE(connect("sender_1")->request("get_public_key receiver_2"), "Public key: " + kKey);
}

void tst_Acl::queueOwnerOutlivesAclChange()
{
    // receiver_1 declares a queue and gets a message in it; then the ACL changes: receiver_1
    // leaves and "receiver" joins, whose namespace "receiver_..." covers receiver_1's queue.
    // The queue stays receiver_1's. Its own broker: this one restarts with another ACL.
    BrokerProcess broker;
    QVERIFY2(broker.start(), broker.output().constData());
    const auto client = [&broker](const QString &identity) {
        auto c = std::make_unique<TestClient>(identity);
        if (!c->connectTo(broker.port()))
            qFatal("cannot connect as %s", qPrintable(identity));
        return c;
    };
    {
        const auto owner = client("receiver_1");
        QCOMPARE(owner->request("declare_exchange " + kExchange), "Exchange declared");
        QCOMPARE(owner->request("declare_queue receiver_1_kept"), "Queue declared");
        QCOMPARE(owner->request("bind receiver_1_kept " + kExchange + " receiver_1_kept"),
                 "Queue bound");
        QCOMPARE(client("sender_1")
                     ->request("publish " + kExchange + " receiver_1_kept " + envelope("kept-1")),
                 "ACK kept-1");
        // An admin provisions a queue in worker-svc-1's namespace: worker-svc-1 may use it.
        QCOMPARE(client("ops-admin")->request("declare_queue worker-svc-1_provisioned"),
                 "Queue declared");
    }
    QVERIFY(broker.terminate());
    broker.set("acl.receiver_cns", R"(["receiver", "worker-svc-1"])");
    QVERIFY2(broker.start(), broker.output().constData());

    const auto intruder = client("receiver");
    const QByteArray notOwner =
        "Error: Permission denied: queue 'receiver_1_kept' belongs to receiver_1";
    QCOMPARE(intruder->request("consume receiver_1_kept"), notOwner);
    QCOMPARE(intruder->request("fetch receiver_1_kept"), notOwner);
    QCOMPARE(intruder->request("bind receiver_1_kept " + kExchange + " receiver_x"), notOwner);
    QCOMPARE(intruder->request("queue_policy receiver_1_kept 1 drop-head"), notOwner);
    // Re-declaring changes nothing and gives nothing: it stays the idempotent success.
    QCOMPARE(intruder->request("declare_queue receiver_1_kept"), "Queue declared");
    QCOMPARE(intruder->request("consume receiver_1_kept"), notOwner);
    QVERIFY(intruder->nothingWithin(300));

    // The admin still reaches it, and the message is still there.
    QCOMPARE(client("ops-admin")->request("fetch receiver_1_kept"), delivery("kept-1"));
    const auto provisioned = client("worker-svc-1");
    QCOMPARE(provisioned->request("consume worker-svc-1_provisioned"), "Subscribed to queue");
    QCOMPARE(provisioned->request("queue_policy worker-svc-1_provisioned 5 drop-head"),
             "Queue policy set");
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_Acl)
#include "tst_02_acl.moc"
