// The compatibility profile against the real broker: every command with its exact reply lines
// (shared/spec/compatibility.md), and line framing under pipelining, split writes, over-long
// lines and invalid UTF-8.

#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"

using cmq::test::BrokerProcess;
using cmq::test::TestClient;

static QByteArray envelope(const QByteArray &id, const QByteArray &receiver = "receiver_1",
                           const QByteArray &extra = {})
{
    return R"({"message_id":")" + id + R"(","receiver_client_id":")" + receiver
           + R"(","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"Y2lwaGVy")" + extra
           + "}";
}

class tst_Protocol : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void receiverTopology();
    void missingArguments_data();
    void missingArguments();
    void unknownCommand();
    void publishAndConsume();
    void publishErrors();
    void publishBatch();
    void fetchAndAck();
    void resend();
    void publicKeys();
    void pipelinedPublishes();
    void pipelinedTopology();
    void burstLargerThanEveryReadBuffer();
    void lineSplitAcrossWrites();
    void crlfLineEndings();
    void invalidUtf8();
    void overlongLine();

private:
    TestClient *connect(const QString &identity);
    // A queue of its own per test (receiver_1_<name>, bound with key receiver_1_<name>), so
    // consumers left connected by one test never take another test's messages.
    void ownQueue(const QByteArray &name);
    BrokerProcess m_broker;
    QList<TestClient *> m_clients;
};

void tst_Protocol::initTestCase()
{
    m_broker.set("server.max_line_bytes", "4096");
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    // The topology the existing receivers set up.
    TestClient *receiver = connect("receiver_1");
    QCOMPARE(receiver->request("declare_queue receiver_1_queue"), "Queue declared");
    QCOMPARE(receiver->request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver->request("bind receiver_1_queue CipherMQ_exchange receiver_1_key"),
             "Queue bound");
}

void tst_Protocol::cleanupTestCase()
{
    qDeleteAll(m_clients);
    QVERIFY(m_broker.terminate());
}

TestClient *tst_Protocol::connect(const QString &identity)
{
    auto *client = new TestClient(identity);
    m_clients.append(client);
    if (!client->connectTo(m_broker.port()))
        qFatal("cannot connect as %s: %s", qPrintable(identity), qPrintable(client->errorString()));
    return client;
}

void tst_Protocol::ownQueue(const QByteArray &name)
{
    TestClient *receiver = connect("receiver_1");
    QCOMPARE(receiver->request("declare_queue receiver_1_" + name), "Queue declared");
    QCOMPARE(receiver->request("bind receiver_1_" + name + " CipherMQ_exchange receiver_1_" + name),
             "Queue bound");
}

void tst_Protocol::receiverTopology()
{
    TestClient *receiver = connect("receiver_1");
    // Idempotent re-declarations, as every existing receiver sends them on each start.
    QCOMPARE(receiver->request("declare_queue receiver_1_queue"), "Queue declared");
    QCOMPARE(receiver->request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver->request("bind receiver_1_queue CipherMQ_exchange receiver_1_key"),
             "Queue bound");
    QCOMPARE(receiver->request("bind receiver_1_queue NoSuchExchange receiver_1_key"),
             "Error: Exchange 'NoSuchExchange' not found");
    QCOMPARE(receiver->request("bind receiver_1_other CipherMQ_exchange receiver_1_key"),
             "Error: Queue 'receiver_1_other' not found");
}

void tst_Protocol::missingArguments_data()
{
    QTest::addColumn<QString>("identity");
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QByteArray>("reply");
    QTest::newRow("declare_queue") << "receiver_1" << QByteArray("declare_queue")
                                   << QByteArray("Missing queue name");
    QTest::newRow("declare_exchange") << "receiver_1" << QByteArray("declare_exchange")
                                      << QByteArray("Missing exchange name");
    QTest::newRow("bind") << "receiver_1" << QByteArray("bind receiver_1_queue CipherMQ_exchange")
                          << QByteArray("Missing parameters");
    QTest::newRow("publish") << "sender_1" << QByteArray("publish CipherMQ_exchange")
                             << QByteArray("Missing parameters");
    QTest::newRow("publish_batch") << "sender_1" << QByteArray("publish_batch a b")
                                   << QByteArray("Missing parameters");
    QTest::newRow("consume") << "receiver_1" << QByteArray("consume")
                             << QByteArray("Missing queue name");
    QTest::newRow("fetch") << "receiver_1" << QByteArray("fetch") << QByteArray("Missing queue name");
    QTest::newRow("ack") << "receiver_1" << QByteArray("ack") << QByteArray("Missing message ID");
    QTest::newRow("resend") << "sender_1" << QByteArray("resend") << QByteArray("Missing message ID");
    QTest::newRow("register_public_key") << "receiver_1" << QByteArray("register_public_key")
                                         << QByteArray("Missing public key");
    QTest::newRow("get_public_key") << "sender_1" << QByteArray("get_public_key")
                                    << QByteArray("Missing client ID");
}

void tst_Protocol::missingArguments()
{
    QFETCH(QString, identity);
    QFETCH(QByteArray, line);
    QFETCH(QByteArray, reply);
    QCOMPARE(connect(identity)->request(line), reply);
}

void tst_Protocol::unknownCommand()
{
    TestClient *client = connect("sender_1");
    QCOMPARE(client->request("frobnicate the queue"), "Unknown command");
    QCOMPARE(client->request("PUBLISH a b c"), "Unknown command");
    // The connection stays usable.
    QCOMPARE(client->request("get_public_key nobody_here"), "Public key not found");
}

void tst_Protocol::publishAndConsume()
{
    ownQueue("pc");
    TestClient *receiver = connect("receiver_1");
    TestClient *sender = connect("sender_1");
    QCOMPARE(receiver->request("consume receiver_1_pc"), "Subscribed to queue");
    // Extra fields and spaces inside the JSON are forwarded byte for byte.
    const QByteArray body = envelope("pc-1", "receiver_1", R"(, "sent_time": "2026-01-01T00:00:00Z", "x-extra": {"a": [1, 2]})");
    QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_pc " + body), "ACK pc-1");
    QCOMPARE(receiver->readLine(), "Message: pc-1 " + body);
    QCOMPARE(receiver->request("ack pc-1"), "ACK_CONFIRMED pc-1");
}

void tst_Protocol::publishErrors()
{
    ownQueue("pe");
    TestClient *sender = connect("sender_1");
    QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_pe " + envelope("pe-1")),
             "ACK pe-1");
    QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_pe " + envelope("pe-1")),
             "Error: Duplicate message pe-1 ignored");
    QCOMPARE(sender->request("publish CipherMQ_exchange nobody_key " + envelope("pe-2")),
             "Error: No queues bound to exchange 'CipherMQ_exchange' with routing key 'nobody_key'");
    QVERIFY(sender->request("publish CipherMQ_exchange receiver_1_pe {not json")
                .startsWith("Invalid message format: "));
    QCOMPARE(sender->request(R"(publish CipherMQ_exchange receiver_1_pe {"message_id":"pe-3"})")
                 .left(23),
             "Invalid message format:");
    QVERIFY(sender->request(R"(publish CipherMQ_exchange receiver_1_pe {"message_id":"pe-4","receiver_client_id":"r","enc_session_key":1,"nonce":"n","ciphertext":"c"})")
                .startsWith("Invalid message format: "));
    // The unroutable one was not stored: publishing it once routable succeeds.
    QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_pe " + envelope("pe-2")),
             "ACK pe-2");
    // Drain what we queued so later tests see an empty queue.
    TestClient *receiver = connect("receiver_1");
    for (const QByteArray id : {"pe-1", "pe-2"}) {
        QCOMPARE(receiver->request("fetch receiver_1_pe"), "Message: " + id + " " + envelope(id));
        QCOMPARE(receiver->request("ack " + id), "ACK_CONFIRMED " + id);
    }
}

void tst_Protocol::publishBatch()
{
    ownQueue("pb");
    TestClient *sender = connect("sender_1");
    const QByteArray batch = "[" + envelope("pb-1") + ", " + envelope("pb-2") + "," + envelope("pb-1")
                             + "]";
    sender->send("publish_batch CipherMQ_exchange receiver_1_pb " + batch);
    // The second pb-1 is answered with the outcome of the first, committed in the same batch.
    QCOMPARE(sender->readLines(3), (QList<QByteArray>{"ACK pb-1", "ACK pb-2", "ACK pb-1"}));
    QCOMPARE(sender->request("publish_batch CipherMQ_exchange receiver_1_pb [" + envelope("pb-1") +
                             "]"),
             "Error: Duplicate message pb-1 ignored for message pb-1");
    QVERIFY(sender->request("publish_batch CipherMQ_exchange receiver_1_pb [{]")
                .startsWith("Invalid batch format: "));
    QVERIFY(sender->request("publish_batch CipherMQ_exchange receiver_1_pb {\"a\":1}")
                .startsWith("Invalid batch format: "));
    sender->send("publish_batch CipherMQ_exchange nobody_key [" + envelope("pb-3") + "]");
    QCOMPARE(sender->readLine(), "Error: No queues bound to exchange 'CipherMQ_exchange' with "
                                 "routing key 'nobody_key' for message pb-3");
    TestClient *receiver = connect("receiver_1");
    for (const QByteArray id : {"pb-1", "pb-2"}) {
        QCOMPARE(receiver->request("fetch receiver_1_pb"), "Message: " + id + " " + envelope(id));
        QCOMPARE(receiver->request("ack " + id), "ACK_CONFIRMED " + id);
    }
}

void tst_Protocol::fetchAndAck()
{
    ownQueue("fa");
    TestClient *receiver = connect("receiver_1");
    TestClient *sender = connect("sender_1");
    QCOMPARE(receiver->request("fetch receiver_1_fa"), "No messages");
    QCOMPARE(receiver->request("fetch receiver_1_nonexistent"), "No messages");
    QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_fa " + envelope("fa-1")),
             "ACK fa-1");
    QCOMPARE(receiver->request("fetch receiver_1_fa"), "Message: fa-1 " + envelope("fa-1"));
    QCOMPARE(receiver->request("fetch receiver_1_fa"), "No messages");
    QCOMPARE(receiver->request("ack fa-1"), "ACK_CONFIRMED fa-1");
    QCOMPARE(receiver->request("ack fa-1"),
             "Error: Message fa-1 is not awaiting acknowledgement from this connection");
}

void tst_Protocol::resend()
{
    ownQueue("rs");
    TestClient *receiver = connect("receiver_1");
    TestClient *sender = connect("sender_1");
    TestClient *otherSender = connect("publisher-svc-1");
    QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_rs " + envelope("rs-1")),
             "ACK rs-1");
    QCOMPARE(receiver->request("fetch receiver_1_rs"), "Message: rs-1 " + envelope("rs-1"));
    QCOMPARE(otherSender->request("resend rs-1"), "Unauthorized resend request");
    QCOMPARE(sender->request("resend no-such-id"), "Message ID not found");
    QCOMPARE(sender->request("resend rs-1"), "Resend requested");
    // The unacked delivery went back to the queue and is delivered again, flagged.
    QCOMPARE(receiver->request("fetch receiver_1_rs"), "Redelivered: rs-1");
    QCOMPARE(receiver->readLine(), "Message: rs-1 " + envelope("rs-1"));
    QCOMPARE(receiver->request("ack rs-1"), "ACK_CONFIRMED rs-1");
    QCOMPARE(sender->request("resend rs-1"), "Message ID not found");
}

void tst_Protocol::publicKeys()
{
    TestClient *receiver = connect("receiver_2");
    TestClient *sender = connect("sender_1");
    const QByteArray key = QByteArray(32, '\x42').toBase64();
    QCOMPARE(sender->request("get_public_key receiver_2"), "Public key not found");
    QCOMPARE(receiver->request("register_public_key " + key), "Public key registered");
    QCOMPARE(sender->request("get_public_key receiver_2"), "Public key: " + key);
    QVERIFY(receiver->request("register_public_key not-base64!").startsWith("Error: "));
    QVERIFY(receiver->request("register_public_key " + QByteArray(16, 'A').toBase64())
                .startsWith("Error: "));
    QCOMPARE(sender->request("get_public_key receiver_2"), "Public key: " + key);
}

void tst_Protocol::pipelinedPublishes()
{
    ownQueue("pp");
    TestClient *sender = connect("sender_1");
    TestClient *receiver = connect("receiver_1");
    // 200 publishes in one write: every reply, in order.
    QByteArray burst;
    for (int i = 0; i < 200; ++i) {
        burst += "publish CipherMQ_exchange receiver_1_pp " + envelope("pp-" + QByteArray::number(i))
                 + "\n";
    }
    sender->sendRaw(burst);
    for (int i = 0; i < 200; ++i)
        QCOMPARE(sender->readLine(), "ACK pp-" + QByteArray::number(i));
    // Consumers receive them in order too; acks pipelined the same way.
    QCOMPARE(receiver->request("consume receiver_1_pp"), "Subscribed to queue");
    QByteArray acks;
    for (int i = 0; i < 200; ++i) {
        const QByteArray id = "pp-" + QByteArray::number(i);
        QCOMPARE(receiver->readLine(), "Message: " + id + " " + envelope(id));
        acks += "ack " + id + "\n";
    }
    receiver->sendRaw(acks);
    for (int i = 0; i < 200; ++i)
        QCOMPARE(receiver->readLine(), "ACK_CONFIRMED pp-" + QByteArray::number(i));
}

void tst_Protocol::burstLargerThanEveryReadBuffer()
{
    // ~350 KB in one write: more than one socket read (OpenSSL's ~16 KB), the broker's 64 KB
    // decryption scratch and many TCP segments. The broker stops reading a socket early once a
    // read came back short; every line must still be answered without the client sending more.
    ownQueue("bb");
    TestClient *sender = connect("sender_1");
    QByteArray burst;
    for (int i = 0; i < 2000; ++i) {
        burst += "publish CipherMQ_exchange receiver_1_bb " + envelope("bb-" + QByteArray::number(i))
                 + "\n";
    }
    QVERIFY(burst.size() > 300 * 1024);
    sender->sendRaw(burst);
    for (int i = 0; i < 2000; ++i)
        QCOMPARE(sender->readLine(), "ACK bb-" + QByteArray::number(i));
}

void tst_Protocol::pipelinedTopology()
{
    // A whole set-up in one write, nothing declared before: each request sees the effect of
    // the ones ahead of it, although those complete only once storage has committed them.
    TestClient *receiver = connect("receiver_1");
    receiver->sendRaw("declare_exchange pt_exchange\n"
                      "declare_queue receiver_1_pt\n"
                      "bind receiver_1_pt pt_exchange receiver_1_pt\n"
                      "consume receiver_1_pt\n");
    QCOMPARE(receiver->readLine(), "Exchange declared");
    QCOMPARE(receiver->readLine(), "Queue declared");
    QCOMPARE(receiver->readLine(), "Queue bound");
    QCOMPARE(receiver->readLine(), "Subscribed to queue");
    TestClient *sender = connect("sender_1");
    QCOMPARE(sender->request("publish pt_exchange receiver_1_pt " + envelope("pt-1")),
             "ACK pt-1");
    QCOMPARE(receiver->readLine(), "Message: pt-1 " + envelope("pt-1"));
}

void tst_Protocol::lineSplitAcrossWrites()
{
    ownQueue("sp");
    TestClient *sender = connect("sender_1");
    const QByteArray line = "publish CipherMQ_exchange receiver_1_sp " + envelope("sp-1") + "\n";
    // Byte by byte for the first part, then the rest: the broker frames by line, not by read.
    for (int i = 0; i < 20; ++i) {
        sender->sendRaw(line.mid(i, 1));
        QVERIFY(sender->nothingWithin(20));
    }
    sender->sendRaw(line.mid(20));
    QCOMPARE(sender->readLine(), "ACK sp-1");
    TestClient *receiver = connect("receiver_1");
    QCOMPARE(receiver->request("fetch receiver_1_sp"), "Message: sp-1 " + envelope("sp-1"));
    QCOMPARE(receiver->request("ack sp-1"), "ACK_CONFIRMED sp-1");
}

void tst_Protocol::crlfLineEndings()
{
    TestClient *sender = connect("sender_1");
    sender->sendRaw("get_public_key nobody\r\nget_public_key nobody2\r\n");
    QCOMPARE(sender->readLines(2),
             (QList<QByteArray>{"Public key not found", "Public key not found"}));

    // A carriage return anywhere but before the "\n" is refused; the connection stays open.
    sender->sendRaw("get_public_key nobody\rMessage: forged {}\r\nget_public_key nobody\r\n");
    QCOMPARE(
        sender->readLines(2),
        (QList<QByteArray>{"Error: Invalid request line: a carriage return may only end the line",
                           "Public key not found"}));
}

void tst_Protocol::invalidUtf8()
{
    TestClient *sender = connect("sender_1");
    sender->sendRaw("declare_queue caf\xc3\x28\nget_public_key nobody\n");
    QCOMPARE(sender->readLine(), "Error: Invalid UTF-8 in request line");
    QCOMPARE(sender->readLine(), "Public key not found"); // still serving this connection
}

void tst_Protocol::overlongLine()
{
    TestClient *sender = connect("sender_1");
    // 4096 is this broker's limit: a line of exactly that length is fine...
    const QByteArray prefix = "get_public_key ";
    QByteArray ok = prefix + QByteArray(4096 - prefix.size(), 'k');
    QVERIFY(sender->request(ok).startsWith("Error: Invalid client ID")); // a name too long
    // ...one byte more is refused and the connection closed, without waiting for a newline.
    sender->sendRaw(QByteArray(5000, 'x'));
    QCOMPARE(sender->readLine(),
             "Error: Line too long: the limit is 4096 bytes; closing the connection");
    QVERIFY(sender->waitForDisconnected());
    // Others are unaffected.
    QCOMPARE(connect("sender_1")->request("get_public_key nobody"), "Public key not found");
}

QTEST_GUILESS_MAIN(tst_Protocol)
#include "tst_01_protocol.moc"
