// The reply reader against the reply builders: every reply line of docs/PROTOCOL.md, built by
// protocol/replies.h, reads back as the kind, message id and text it was built from.

#include <QtTest>

#include "protocol/replies.h"
#include "protocol/replyreader.h"

using cmq::protocol::readReply;
using cmq::protocol::ReplyLine;
using Kind = cmq::protocol::ReplyLine::Kind;
namespace reply = cmq::protocol::reply;

Q_DECLARE_METATYPE(cmq::protocol::ReplyLine::Kind)

class tst_ReplyReader : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data();
    void roundTrip();
    void isError();
};

void tst_ReplyReader::roundTrip_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<Kind>("kind");
    QTest::addColumn<QByteArray>("id");
    QTest::addColumn<QByteArray>("text");
    const QByteArray json = R"({"message_id":"m-1","ciphertext":"a b"})";

    QTest::newRow("queueDeclared")
        << reply::queueDeclared() << Kind::QueueDeclared << QByteArray() << QByteArray();
    QTest::newRow("exchangeDeclared")
        << reply::exchangeDeclared() << Kind::ExchangeDeclared << QByteArray() << QByteArray();
    QTest::newRow("queueBound") << reply::queueBound() << Kind::QueueBound << QByteArray()
                                << QByteArray();
    QTest::newRow("queuePolicySet")
        << reply::queuePolicySet() << Kind::QueuePolicySet << QByteArray() << QByteArray();
    QTest::newRow("ack") << reply::ack("m-1") << Kind::Ack << QByteArray("m-1") << QByteArray();
    QTest::newRow("ackConfirmed") << reply::ackConfirmed("m-1") << Kind::AckConfirmed
                                  << QByteArray("m-1") << QByteArray();
    QTest::newRow("nackConfirmed")
        << reply::nackConfirmed("m-1") << Kind::NackConfirmed << QByteArray("m-1") << QByteArray();
    QTest::newRow("subscribed") << reply::subscribed() << Kind::Subscribed << QByteArray()
                                << QByteArray();
    QTest::newRow("noMessages") << reply::noMessages() << Kind::NoMessages << QByteArray()
                                << QByteArray();
    QTest::newRow("message") << reply::message("m-1", json) << Kind::Message << QByteArray("m-1")
                             << json;
    QTest::newRow("redelivered") << reply::redelivered("m-1") << Kind::Redelivered
                                 << QByteArray("m-1") << QByteArray();
    QTest::newRow("resendRequested")
        << reply::resendRequested() << Kind::ResendRequested << QByteArray() << QByteArray();
    QTest::newRow("unauthorizedResend")
        << reply::unauthorizedResend() << Kind::UnauthorizedResend << QByteArray() << QByteArray();
    QTest::newRow("messageIdNotFound")
        << reply::messageIdNotFound() << Kind::MessageIdNotFound << QByteArray() << QByteArray();
    QTest::newRow("publicKeyRegistered")
        << reply::publicKeyRegistered() << Kind::PublicKeyRegistered << QByteArray()
        << QByteArray();
    QTest::newRow("publicKey") << reply::publicKey("AAAA+/==") << Kind::PublicKey << QByteArray()
                               << QByteArray("AAAA+/==");
    QTest::newRow("publicKeyNotFound")
        << reply::publicKeyNotFound() << Kind::PublicKeyNotFound << QByteArray() << QByteArray();
    QTest::newRow("unknownCommand")
        << reply::unknownCommand() << Kind::UnknownCommand << QByteArray() << QByteArray();
    QTest::newRow("error") << reply::error("Queue 'q' not found") << Kind::Error << QByteArray()
                           << QByteArray("Queue 'q' not found");
    QTest::newRow("error naming a message")
        << reply::error("Message m-1 is not awaiting acknowledgement from this connection")
        << Kind::Error << QByteArray()
        << QByteArray("Message m-1 is not awaiting acknowledgement from this connection");
    QTest::newRow("batchError") << reply::batchError("storage unavailable", "m-1") << Kind::Error
                                << QByteArray("m-1") << QByteArray("storage unavailable");
    QTest::newRow("invalidMessageFormat")
        << reply::invalidMessageFormat("missing message_id") << Kind::InvalidMessageFormat
        << QByteArray() << QByteArray("missing message_id");
    QTest::newRow("invalidBatchFormat")
        << reply::invalidBatchFormat("element 2: not an object") << Kind::InvalidBatchFormat
        << QByteArray() << QByteArray("element 2: not an object");
    QTest::newRow("duplicateMessage")
        << reply::duplicateMessage("m-1") << Kind::Duplicate << QByteArray("m-1")
        << QByteArray("Duplicate message m-1 ignored");
    QTest::newRow("duplicateMessage, batch")
        << reply::batchError(reply::duplicateMessageText("m-1"), "m-1") << Kind::Duplicate
        << QByteArray("m-1") << QByteArray("Duplicate message m-1 ignored");
    QTest::newRow("noQueuesBound")
        << reply::noQueuesBound("CipherMQ_exchange", "r_key") << Kind::Unroutable << QByteArray()
        << QByteArray("No queues bound to exchange 'CipherMQ_exchange' with routing key 'r_key'");
    QTest::newRow("noQueuesBound, batch")
        << reply::batchError(reply::noQueuesBoundText("ex", "rk"), "m-1") << Kind::Unroutable
        << QByteArray("m-1")
        << QByteArray("No queues bound to exchange 'ex' with routing key 'rk'");
    QTest::newRow("raw: Missing parameters")
        << reply::raw("Missing parameters") << Kind::MissingArgument << QByteArray()
        << QByteArray("Missing parameters");
    QTest::newRow("raw: Missing queue name")
        << reply::raw("Missing queue name") << Kind::MissingArgument << QByteArray()
        << QByteArray("Missing queue name");
    QTest::newRow("ping") << reply::ping() << Kind::Ping << QByteArray() << QByteArray();
    QTest::newRow("heartbeatAccepted")
        << reply::heartbeatAccepted(30) << Kind::Heartbeat << QByteArray() << QByteArray("30");
    QTest::newRow("shutdownNotice")
        << reply::shutdownNotice() << Kind::ShutdownNotice << QByteArray() << QByteArray();
    QTest::newRow("qosSet") << reply::qosSet(0) << Kind::QosSet << QByteArray() << QByteArray("0");
    QTest::newRow("presenceOn") << reply::presenceOn() << Kind::PresenceOn << QByteArray()
                                << QByteArray();
    QTest::newRow("presenceOff") << reply::presenceOff() << Kind::PresenceOff << QByteArray()
                                 << QByteArray();
    QTest::newRow("presence online") << reply::presence("svc-b", true) << Kind::Presence
                                     << QByteArray() << QByteArray("svc-b online");
    QTest::newRow("presence offline") << reply::presence("svc-b", false) << Kind::Presence
                                      << QByteArray() << QByteArray("svc-b offline");
    QTest::newRow("something else")
        << QByteArray("Hello there\n") << Kind::Other << QByteArray() << QByteArray("Hello there");
    {
        reply::DeliveryMeta meta;
        meta.sender = "sender_1";
        meta.publishedAtMs = 1700000000123;
        const QByteArray lines = reply::deliveryWithMeta("m-1", json, meta);
        const QByteArray metaLine = lines.first(lines.indexOf('\n') + 1);
        QTest::newRow("meta") << metaLine << Kind::Meta << QByteArray("m-1")
                              << metaLine.sliced(10).chopped(1);
        QTest::newRow("message after meta")
            << lines.sliced(metaLine.size()) << Kind::Message << QByteArray("m-1") << json;
    }
    QTest::newRow("a Meta line without json")
        << QByteArray("Meta: m-1\n") << Kind::Meta << QByteArray("m-1") << QByteArray();
    QTest::newRow("a Message line without json")
        << QByteArray("Message: m-1\n") << Kind::Message << QByteArray("m-1") << QByteArray();
}

void tst_ReplyReader::roundTrip()
{
    QFETCH(QByteArray, line);
    QFETCH(Kind, kind);
    QFETCH(QByteArray, id);
    QFETCH(QByteArray, text);
    QVERIFY(line.endsWith('\n'));
    for (const QByteArray &form : {line, line.chopped(1)}) {
        const ReplyLine read = readReply(form);
        QCOMPARE(read.kind, kind);
        QCOMPARE(read.id.toByteArray(), id);
        QCOMPARE(read.text.toByteArray(), text);
    }
    if (kind == Kind::Message) // no json at all is told apart from an empty one
        QCOMPARE(readReply(line).text.isNull(), text.isEmpty() && !line.contains("m-1 "));
}

void tst_ReplyReader::isError()
{
    const QByteArray denied = reply::error("Permission denied: sender_1 may not consume");
    QVERIFY(readReply(denied).isError());
    QVERIFY(readReply(denied).isError("Permission denied"));
    QVERIFY(!readReply(denied).isError("Unauthorized"));
    QVERIFY(readReply(reply::duplicateMessage("m")).isError());
    QVERIFY(!readReply(reply::ack("m")).isError());
    QVERIFY(!readReply(reply::invalidMessageFormat("x")).isError());
}

QTEST_GUILESS_MAIN(tst_ReplyReader)
#include "tst_replyreader.moc"
