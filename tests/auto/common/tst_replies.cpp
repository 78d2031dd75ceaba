// Every reply line byte for byte: existing clients compare them exactly
// (shared/spec/compatibility.md).

#include <QTest>

#include "protocol/replies.h"

namespace reply = cmq::protocol::reply;

class tst_Replies : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void lines_data();
    void lines();
    void messageKeepsEnvelopeBytes();
    void redeliveryAndRefusalTexts();
    void deliveryWithMeta();
};

void tst_Replies::lines_data()
{
    QTest::addColumn<QByteArray>("actual");
    QTest::addColumn<QByteArray>("expected");

    const QByteArray json = R"({"message_id": "s-1-r", "ciphertext": "x y"})";

    QTest::newRow("queueDeclared") << reply::queueDeclared() << QByteArray("Queue declared\n");
    QTest::newRow("exchangeDeclared")
        << reply::exchangeDeclared() << QByteArray("Exchange declared\n");
    QTest::newRow("queueBound") << reply::queueBound() << QByteArray("Queue bound\n");
    QTest::newRow("ack") << reply::ack("sender_1-42-receiver_1")
                         << QByteArray("ACK sender_1-42-receiver_1\n");
    QTest::newRow("ackConfirmed") << reply::ackConfirmed("m1") << QByteArray("ACK_CONFIRMED m1\n");
    QTest::newRow("subscribed") << reply::subscribed() << QByteArray("Subscribed to queue\n");
    QTest::newRow("noMessages") << reply::noMessages() << QByteArray("No messages\n");
    QTest::newRow("message") << reply::message("s-1-r", json)
                             << QByteArray("Message: s-1-r " + json + "\n");
    QTest::newRow("resendRequested")
        << reply::resendRequested() << QByteArray("Resend requested\n");
    QTest::newRow("unauthorizedResend")
        << reply::unauthorizedResend() << QByteArray("Unauthorized resend request\n");
    QTest::newRow("messageIdNotFound")
        << reply::messageIdNotFound() << QByteArray("Message ID not found\n");
    QTest::newRow("publicKeyRegistered")
        << reply::publicKeyRegistered() << QByteArray("Public key registered\n");
    QTest::newRow("publicKey") << reply::publicKey("q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=")
                               << QByteArray(
                                      "Public key: q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=\n");
    QTest::newRow("publicKeyNotFound")
        << reply::publicKeyNotFound() << QByteArray("Public key not found\n");
    QTest::newRow("unknownCommand") << reply::unknownCommand() << QByteArray("Unknown command\n");
    QTest::newRow("error") << reply::error("Invalid queue name")
                           << QByteArray("Error: Invalid queue name\n");
    QTest::newRow("batchError") << reply::batchError("Duplicate message m1 ignored", "m1")
                                << QByteArray(
                                       "Error: Duplicate message m1 ignored for message m1\n");
    QTest::newRow("invalidMessageFormat")
        << reply::invalidMessageFormat("missing field `nonce`")
        << QByteArray("Invalid message format: missing field `nonce`\n");
    QTest::newRow("invalidBatchFormat")
        << reply::invalidBatchFormat("expected a JSON array")
        << QByteArray("Invalid batch format: expected a JSON array\n");
    QTest::newRow("duplicateMessage")
        << reply::duplicateMessage("m1") << QByteArray("Error: Duplicate message m1 ignored\n");
    QTest::newRow("noQueuesBound")
        << reply::noQueuesBound("CipherMQ_exchange", "receiver_9_key")
        << QByteArray("Error: No queues bound to exchange 'CipherMQ_exchange' with routing key "
                      "'receiver_9_key'\n");
    QTest::newRow("raw") << reply::raw("Stats reset") << QByteArray("Stats reset\n");
    QTest::newRow("raw empty") << reply::raw({}) << QByteArray("\n");
    QTest::newRow("ping") << reply::ping() << QByteArray("PING\n");
    QTest::newRow("heartbeatAccepted")
        << reply::heartbeatAccepted(30) << QByteArray("Heartbeat 30\n");
    QTest::newRow("heartbeatAccepted max")
        << reply::heartbeatAccepted(3600) << QByteArray("Heartbeat 3600\n");
    QTest::newRow("redelivered") << reply::redelivered("m1") << QByteArray("Redelivered: m1\n");
    QTest::newRow("delivery") << reply::delivery("m1", "{}", false)
                              << QByteArray("Message: m1 {}\n");
    QTest::newRow("nackConfirmed")
        << reply::nackConfirmed("m1") << QByteArray("NACK_CONFIRMED m1\n");
    QTest::newRow("qosSet") << reply::qosSet(100) << QByteArray("Qos set to 100\n");
    QTest::newRow("qosSet zero") << reply::qosSet(0) << QByteArray("Qos set to 0\n");
    QTest::newRow("shutdownNotice")
        << reply::shutdownNotice() << QByteArray("Server shutting down\n");
}

void tst_Replies::lines()
{
    QFETCH(QByteArray, actual);
    QFETCH(QByteArray, expected);
    QCOMPARE(actual, expected);
    // One line each: a stray "\n" inside would desynchronise every client's readline().
    QCOMPARE(actual.count('\n'), 1);
}

void tst_Replies::messageKeepsEnvelopeBytes()
{
    // The broker is blind: the envelope goes out exactly as published, unusual spacing, escapes,
    // field order and non-ASCII included.
    const QByteArray json = "{ \"z\":1,\"message_id\" : \"m\\u0031\", \"x\": \"\xc3\xa9\" }";
    const QByteArray line = reply::message("m1", json);
    QCOMPARE(line, "Message: m1 " + json + "\n");
}

void tst_Replies::redeliveryAndRefusalTexts()
{
    QCOMPARE(reply::delivery("m1", "{}", true), QByteArray("Redelivered: m1\nMessage: m1 {}\n"));
    // The texts batchError() names a message after: the refusal lines without "Error: ", "\n".
    QCOMPARE(reply::duplicateMessageText("m1"), QByteArray("Duplicate message m1 ignored"));
    QCOMPARE(reply::noQueuesBoundText("ex", "rk"),
             QByteArray("No queues bound to exchange 'ex' with routing key 'rk'"));
    QCOMPARE(reply::error(reply::duplicateMessageText("m1")), reply::duplicateMessage("m1"));
    QCOMPARE(reply::error(reply::noQueuesBoundText("ex", "rk")), reply::noQueuesBound("ex", "rk"));
}

void tst_Replies::deliveryWithMeta()
{
    // The meta line goes first and replaces "Redelivered:"; the Message line is the usual one.
    reply::DeliveryMeta meta;
    meta.sender = "sender_1";
    meta.publishedAtMs = 1700000000123; // 2023-11-14T22:13:20.123Z
    meta.redelivered = true;
    meta.deliveryCount = 3;
    QCOMPARE(reply::deliveryWithMeta("m1", "{ \"a\" : 1 }", meta),
             QByteArray(R"(Meta: m1 {"delivery_count":3,"published_at":"2023-11-14T22:13:20.123Z",)"
                        R"("redelivered":true,"sender":"sender_1"})"
                        "\nMessage: m1 { \"a\" : 1 }\n"));
    // A dead letter: its whole record, where from, when and its deliveries there.
    meta.deadLetterReason = "expired";
    meta.deadLetterOriginalQueue = "svc_in";
    meta.deadLetteredAtMs = 1700000000456;
    meta.deadLetterDeliveryCount = 2;
    meta.sender = "a\"b";
    meta.redelivered = false;
    meta.deliveryCount = 1;
    QCOMPARE(reply::deliveryWithMeta("m1", "{}", meta),
             QByteArray(R"(Meta: m1 {"dead_letter_delivery_count":2,)"
                        R"("dead_letter_original_queue":"svc_in","dead_letter_reason":"expired",)"
                        R"("dead_lettered_at":"2023-11-14T22:13:20.456Z","delivery_count":1,)"
                        R"("published_at":"2023-11-14T22:13:20.123Z","redelivered":false,)"
                        "\"sender\":\"a\\\"b\"}"
                        "\nMessage: m1 {}\n"));
}

QTEST_APPLESS_MAIN(tst_Replies)

#include "tst_replies.moc"
