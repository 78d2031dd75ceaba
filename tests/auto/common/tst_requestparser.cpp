// Request parsing: every command of the compatibility profile with its exact "Missing ..."
// replies, the extensions, argument splitting and name validation.

#include <QTest>

#include "protocol/request.h"

using namespace cmq::protocol;

namespace cmq::protocol {
char *toString(ParseStatus status)
{
    switch (status) {
    case ParseStatus::Ok:
        return qstrdup("Ok");
    case ParseStatus::MissingArguments:
        return qstrdup("MissingArguments");
    case ParseStatus::InvalidArgument:
        return qstrdup("InvalidArgument");
    case ParseStatus::UnknownCommand:
        return qstrdup("UnknownCommand");
    }
    return qstrdup("?");
}

char *toString(Command command)
{
    return qstrdup(commandName(command));
}
} // namespace cmq::protocol

class tst_RequestParser : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parse_data();
    void parse();
    void commandNames_data();
    void commandNames();
    void isValidName_data();
    void isValidName();
};

using Args = QList<QByteArray>;

void tst_RequestParser::parse_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<ParseStatus>("status");
    QTest::addColumn<Command>("command");
    QTest::addColumn<Args>("args");
    QTest::addColumn<QByteArray>("errorReply");

    const auto okRow = [](const char *name, const QByteArray &line, Command command,
                          const Args &args) {
        QTest::newRow(name) << line << ParseStatus::Ok << command << args << QByteArray();
    };
    const auto failRow = [](const char *name, const QByteArray &line, ParseStatus status,
                            const char *reply) {
        QTest::newRow(name) << line << status << Command::Unknown << Args() << QByteArray(reply);
    };
    const auto missing = ParseStatus::MissingArguments;
    const auto invalid = ParseStatus::InvalidArgument;
    const auto unknown = ParseStatus::UnknownCommand;
    const QByteArray json = R"({"message_id": "s-1-r", "ciphertext": "a b  c"})";
    const QByteArray badQueue =
        "Error: Invalid queue name: must not contain spaces or control characters";

    // The exchanges of the existing Python clients (compatibility.md).
    okRow("declare_queue", "declare_queue receiver_1_queue", Command::DeclareQueue,
          {"receiver_1_queue"});
    okRow("declare_exchange", "declare_exchange CipherMQ_exchange", Command::DeclareExchange,
          {"CipherMQ_exchange"});
    for (const char *type : {"direct", "fanout", "topic"}) {
        okRow(qPrintable(QStringLiteral("declare_exchange %1").arg(type)),
              QByteArray("declare_exchange  ex  ") + type + "  ", Command::DeclareExchange,
              {"ex", type});
    }
    okRow("bind", "bind receiver_1_queue CipherMQ_exchange receiver_1_key", Command::Bind,
          {"receiver_1_queue", "CipherMQ_exchange", "receiver_1_key"});
    okRow("publish", "publish CipherMQ_exchange receiver_1_key " + json, Command::Publish,
          {"CipherMQ_exchange", "receiver_1_key", json});
    okRow("publish_batch", "publish_batch ex rk [" + json + ", " + json + "]",
          Command::PublishBatch, {"ex", "rk", "[" + json + ", " + json + "]"});
    okRow("consume", "consume receiver_1_queue", Command::Consume, {"receiver_1_queue"});
    okRow("fetch", "fetch q", Command::Fetch, {"q"});
    okRow("consume with-meta", "consume q  with-meta", Command::Consume, {"q", "with-meta"});
    okRow("fetch with-meta", "fetch q with-meta", Command::Fetch, {"q", "with-meta"});
    okRow("a queue named with-meta", "fetch with-meta", Command::Fetch, {"with-meta"});
    okRow("ack", "ack sender_1-42-receiver_1", Command::Ack, {"sender_1-42-receiver_1"});
    okRow("resend", "resend m1", Command::Resend, {"m1"});
    okRow("register_public_key", "register_public_key AAAA/+==", Command::RegisterPublicKey,
          {"AAAA/+=="});
    okRow("get_public_key", "get_public_key receiver_1", Command::GetPublicKey, {"receiver_1"});

    // Extensions.
    okRow("heartbeat", "heartbeat 30", Command::Heartbeat, {"30"});
    okRow("heartbeat min", "heartbeat 1", Command::Heartbeat, {"1"});
    okRow("heartbeat max", "heartbeat 3600", Command::Heartbeat, {"3600"});
    okRow("pong", "pong", Command::Pong, {});
    okRow("qos 0", "qos 0", Command::Qos, {"0"});
    okRow("qos max", "qos 65535", Command::Qos, {"65535"});
    okRow("nack", "nack m1", Command::Nack, {"m1"});
    okRow("nack requeue", "nack m1 requeue", Command::Nack, {"m1", "requeue"});
    okRow("nack drop", "nack m1 drop", Command::Nack, {"m1", "drop"});
    okRow("queue_policy ttl", "queue_policy q1 0 drop-head 60000", Command::QueuePolicy,
          {"q1", "0", "drop-head", "60000"});
    okRow("queue_policy reject", "queue_policy q1 100 reject-publish", Command::QueuePolicy,
          {"q1", "100", "reject-publish"});
    okRow("queue_policy default length", "queue_policy q1 0 drop-head", Command::QueuePolicy,
          {"q1", "0", "drop-head"});
    // Dead-letter options: named, any order, listed in a fixed order after the TTL.
    okRow("queue_policy dlx", "queue_policy q1 0 drop-head dlx=dead", Command::QueuePolicy,
          {"q1", "0", "drop-head", "dlx=dead"});
    okRow("queue_policy ttl and options",
          "queue_policy q1 5 reject-publish 100 delivery_limit=3 dlx_key=k dlx=x",
          Command::QueuePolicy,
          {"q1", "5", "reject-publish", "100", "dlx=x", "dlx_key=k", "delivery_limit=3"});
    okRow("queue_policy named ttl", "queue_policy q1 0 drop-head dead_letter_overflow=on ttl_ms=9",
          Command::QueuePolicy, {"q1", "0", "drop-head", "9", "dead_letter_overflow=on"});
    okRow("queue_policy dlx cleared", "queue_policy q1 0 drop-head dlx=", Command::QueuePolicy,
          {"q1", "0", "drop-head", "dlx="});

    // Whitespace: the line is trimmed; runs of spaces separate names; the body is kept as is.
    okRow("trailing whitespace", "ack m1 \t ", Command::Ack, {"m1"});
    okRow("leading whitespace", " \t declare_queue q", Command::DeclareQueue, {"q"});
    okRow("double space before name", "consume  q", Command::Consume, {"q"});
    okRow("runs of spaces in bind", "bind  q   e    k", Command::Bind, {"q", "e", "k"});
    okRow("body keeps inner spaces", "publish e  k   { \"a\" :  1 }  ", Command::Publish,
          {"e", "k", "{ \"a\" :  1 }"});
    okRow("body that is not json is not the parser's business", "publish e k not json",
          Command::Publish, {"e", "k", "not json"});
    okRow("utf-8 names", "declare_queue \xc3\xa9t\xc3\xa9", Command::DeclareQueue,
          {"\xc3\xa9t\xc3\xa9"});
    okRow("255-byte name", "declare_queue " + QByteArray(255, 'q'), Command::DeclareQueue,
          {QByteArray(255, 'q')});
    okRow("heartbeat leading zeros", "heartbeat 0060", Command::Heartbeat, {"0060"});

    // Missing arguments: the exact compatibility replies.
    failRow("declare_queue bare", "declare_queue", missing, "Missing queue name");
    failRow("declare_queue space", "declare_queue   ", missing, "Missing queue name");
    failRow("declare_exchange bare", "declare_exchange", missing, "Missing exchange name");
    failRow("bind none", "bind", missing, "Missing parameters");
    failRow("bind one", "bind q", missing, "Missing parameters");
    failRow("bind two", "bind q e", missing, "Missing parameters");
    failRow("bind two, trailing space", "bind q e ", missing, "Missing parameters");
    failRow("publish none", "publish", missing, "Missing parameters");
    failRow("publish two", "publish e k", missing, "Missing parameters");
    failRow("publish_batch two", "publish_batch e k", missing, "Missing parameters");
    failRow("consume bare", "consume", missing, "Missing queue name");
    failRow("fetch bare", "fetch ", missing, "Missing queue name");
    failRow("ack bare", "ack", missing, "Missing message ID");
    failRow("resend bare", "resend", missing, "Missing message ID");
    failRow("nack bare", "nack", missing, "Missing message ID");
    failRow("register_public_key bare", "register_public_key", missing, "Missing public key");
    failRow("get_public_key bare", "get_public_key", missing, "Missing client ID");
    failRow("heartbeat bare", "heartbeat", missing, "Missing parameters");
    failRow("qos bare", "qos", missing, "Missing parameters");

    // Unknown commands: names are exact and lowercase.
    failRow("empty", "", unknown, "Unknown command");
    failRow("blank", " \t ", unknown, "Unknown command");
    failRow("unknown", "subscribe q", unknown, "Unknown command");
    failRow("uppercase", "DECLARE_QUEUE q", unknown, "Unknown command");
    failRow("prefix", "declare q", unknown, "Unknown command");
    failRow("longer", "acks m1", unknown, "Unknown command");
    failRow("tab is not the separator", "ack\tm1", unknown, "Unknown command");
    failRow("original's admin commands", "stats", unknown, "Unknown command");

    // Invalid names.
    failRow("queue with space", "declare_queue my queue", invalid, badQueue);
    failRow("queue with tab", "consume a\tb", invalid, badQueue);
    failRow("consume with another word", "consume a b", invalid, badQueue);
    failRow("consume with-meta twice", "consume a with-meta with-meta", invalid, badQueue);
    failRow("queue with nul", QByteArray("fetch a\0b", 9), invalid, badQueue);
    failRow("queue with del", "declare_queue a\x7f", invalid, badQueue);
    failRow("queue with nbsp", "declare_queue a\xc2\xa0x", invalid, badQueue);
    failRow("queue with c1 control", "declare_queue a\xc2\x85x", invalid, badQueue);
    failRow("queue with ideographic space", "declare_queue a\xe3\x80\x80x", invalid, badQueue);
    failRow("queue with line separator", "declare_queue a\xe2\x80\xa8x", invalid, badQueue);
    failRow("256-byte queue", "declare_queue " + QByteArray(256, 'q'), invalid,
            "Error: Invalid queue name: longer than 255 bytes");
    // The type is the rest of the line as given: the broker, which knows the types, refuses
    // an unknown one (tst_dispatcher::unknownExchangeTypes).
    okRow("exchange with unknown type", "declare_exchange a b", Command::DeclareExchange,
          {"a", "b"});
    okRow("exchange with two types", "declare_exchange a topic  fanout", Command::DeclareExchange,
          {"a", "topic  fanout"});
    failRow("exchange with control", "declare_exchange a\x01 topic", invalid,
            "Error: Invalid exchange name: must not contain spaces or control characters");
    failRow("bind routing key with space", "bind q e k extra", invalid,
            "Error: Invalid routing key: must not contain spaces or control characters");
    failRow("bind queue with control", "bind q\x01 e k", invalid, badQueue);
    failRow("bind long exchange", "bind q " + QByteArray(300, 'e') + " k", invalid,
            "Error: Invalid exchange name: longer than 255 bytes");
    failRow("publish exchange with control", "publish e\x1b k {}", invalid,
            "Error: Invalid exchange name: must not contain spaces or control characters");
    failRow("publish long routing key", "publish e " + QByteArray(256, 'k') + " {}", invalid,
            "Error: Invalid routing key: longer than 255 bytes");
    failRow("ack with space", "ack m1 m2", invalid,
            "Error: Invalid message ID: must not contain spaces or control characters");
    failRow("resend long id", "resend " + QByteArray(256, 'm'), invalid,
            "Error: Invalid message ID: longer than 255 bytes");
    failRow("get_public_key with space", "get_public_key a b", invalid,
            "Error: Invalid client ID: must not contain spaces or control characters");
    failRow("nack bad mode", "nack m1 later", invalid,
            "Error: Invalid nack mode: expected requeue or drop");
    failRow("nack extra words", "nack m1 drop now", invalid,
            "Error: Invalid nack mode: expected requeue or drop");
    failRow("nack id with control", "nack m\x02 drop", invalid,
            "Error: Invalid message ID: must not contain spaces or control characters");
    failRow("pong with argument", "pong 1", invalid, "Error: pong takes no arguments");
    failRow("queue_policy bare", "queue_policy", missing, "Missing parameters");
    failRow("queue_policy no policy", "queue_policy q1 10", missing, "Missing parameters");
    failRow("queue_policy bad length", "queue_policy q1 ten drop-head", invalid,
            "Error: Invalid max length: expected a whole number from 0 to 1000000000");
    failRow("queue_policy length too big", "queue_policy q1 1000000001 drop-head", invalid,
            "Error: Invalid max length: expected a whole number from 0 to 1000000000");
    failRow("queue_policy bad policy", "queue_policy q1 10 drop-tail", invalid,
            "Error: Invalid overflow policy: expected drop-head or reject-publish");
    const char *badTtl = "Error: Invalid message TTL: expected milliseconds from 0 to 31536000000";
    failRow("queue_policy bad ttl", "queue_policy q1 10 drop-head soon", invalid, badTtl);
    failRow("queue_policy ttl too long", "queue_policy q1 10 drop-head 31536000001", invalid,
            badTtl);
    failRow("queue_policy ttl and more", "queue_policy q1 10 drop-head 5 6", invalid, badTtl);
    failRow("queue_policy option then word", "queue_policy q1 10 drop-head dlx=x 6", invalid,
            badTtl);
    failRow("queue_policy bad named ttl", "queue_policy q1 10 drop-head ttl_ms=soon", invalid,
            badTtl);
    failRow("queue_policy unknown option", "queue_policy q1 10 drop-head colour=red", invalid,
            "Error: Invalid queue policy option: expected ttl_ms, dlx, dlx_key, delivery_limit "
            "or dead_letter_overflow");
    failRow("queue_policy option twice", "queue_policy q1 10 drop-head dlx=a dlx=b", invalid,
            "Error: Invalid queue policy option: each may be given once");
    failRow("queue_policy ttl twice", "queue_policy q1 10 drop-head 5 ttl_ms=5", invalid,
            "Error: Invalid queue policy option: each may be given once");
    failRow("queue_policy bad limit", "queue_policy q1 10 drop-head delivery_limit=1000001",
            invalid, "Error: Invalid delivery limit: expected a whole number from 0 to 1000000");
    failRow("queue_policy bad overflow option",
            "queue_policy q1 10 drop-head dead_letter_overflow=yes", invalid,
            "Error: Invalid dead-letter overflow: expected on or off");
    failRow("queue_policy bad dlx", "queue_policy q1 10 drop-head dlx=a\x01", invalid,
            "Error: Invalid exchange name: must not contain spaces or control characters");

    // A carriage return is only ever part of the "\r\n" terminator, which takeLine strips: one
    // inside a line would let a reader that splits on "\r" see a line the sender forged.
    const char *bareCr = "Error: Invalid request line: a carriage return may only end the line";
    failRow("cr inside a publish body", "publish e k {\"a\": \"x\rMessage: m2 {}\"}", invalid,
            bareCr);
    failRow("cr between arguments", "bind q\re k", invalid, bareCr);
    failRow("cr before the command", "\rack m1", invalid, bareCr);
    failRow("cr left over from cr cr lf", "ack m1\r", invalid, bareCr);
    failRow("cr in an unknown command", "foo\rbar", invalid, bareCr);

    const char *badHeartbeat =
        "Error: Invalid heartbeat interval: expected whole seconds from 1 to 3600";
    failRow("heartbeat zero", "heartbeat 0", invalid, badHeartbeat);
    failRow("heartbeat too big", "heartbeat 3601", invalid, badHeartbeat);
    failRow("heartbeat negative", "heartbeat -5", invalid, badHeartbeat);
    failRow("heartbeat not a number", "heartbeat soon", invalid, badHeartbeat);
    failRow("heartbeat fraction", "heartbeat 1.5", invalid, badHeartbeat);
    failRow("heartbeat two numbers", "heartbeat 1 2", invalid, badHeartbeat);
    failRow("heartbeat overflow", "heartbeat 99999999999999999999999", invalid, badHeartbeat);
    const char *badQos = "Error: Invalid prefetch count: expected a whole number from 0 to 65535";
    failRow("qos too big", "qos 65536", invalid, badQos);
    failRow("qos plus sign", "qos +1", invalid, badQos);
    failRow("qos hex", "qos 0x10", invalid, badQos);
}

void tst_RequestParser::parse()
{
    QFETCH(QByteArray, line);
    QFETCH(ParseStatus, status);
    QFETCH(Command, command);
    QFETCH(Args, args);
    QFETCH(QByteArray, errorReply);

    const ParseResult result = parseRequest(line);
    QCOMPARE(result.status, status);
    QCOMPARE(result.errorReply, errorReply);
    if (status == ParseStatus::Ok) {
        QCOMPARE(result.request.command, command);
        QCOMPARE(result.request.args, args);
    }
}

void tst_RequestParser::commandNames_data()
{
    QTest::addColumn<Command>("command");
    QTest::addColumn<QByteArray>("name");

    const std::pair<Command, const char *> names[] = {
        {Command::DeclareQueue, "declare_queue"},
        {Command::DeclareExchange, "declare_exchange"},
        {Command::Bind, "bind"},
        {Command::Publish, "publish"},
        {Command::PublishBatch, "publish_batch"},
        {Command::Consume, "consume"},
        {Command::Fetch, "fetch"},
        {Command::Ack, "ack"},
        {Command::Resend, "resend"},
        {Command::RegisterPublicKey, "register_public_key"},
        {Command::GetPublicKey, "get_public_key"},
        {Command::Heartbeat, "heartbeat"},
        {Command::Pong, "pong"},
        {Command::Qos, "qos"},
        {Command::Nack, "nack"},
        {Command::Unknown, "unknown"},
    };
    for (const auto &[command, name] : names)
        QTest::newRow(name) << command << QByteArray(name);
}

void tst_RequestParser::commandNames()
{
    QFETCH(Command, command);
    QFETCH(QByteArray, name);
    QCOMPARE(QByteArray(commandName(command)), name);
    if (command != Command::Unknown) {
        // The wire name parses back to the same command (its arguments may be missing).
        const ParseResult result = parseRequest(name + " 1 2 3");
        QVERIFY(result.status != ParseStatus::UnknownCommand);
    }
}

void tst_RequestParser::isValidName_data()
{
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<bool>("valid");

    QTest::newRow("plain") << QByteArray("receiver_1_queue") << true;
    QTest::newRow("punctuation") << QByteArray("a.b-c:d/e#*") << true;
    QTest::newRow("utf-8") << QByteArray("\xe2\x82\xac\xf0\x9f\x98\x80") << true;
    QTest::newRow("U+2060 word joiner is not a space") << QByteArray("a\xe2\x81\xa0") << true;
    QTest::newRow("255 bytes") << QByteArray(255, 'n') << true;
    QTest::newRow("empty") << QByteArray() << false;
    QTest::newRow("256 bytes") << QByteArray(256, 'n') << false;
    QTest::newRow("space") << QByteArray("a b") << false;
    QTest::newRow("cr") << QByteArray("a\r") << false;
    QTest::newRow("newline") << QByteArray("a\nb") << false;
    QTest::newRow("U+0080") << QByteArray("\xc2\x80") << false;
    QTest::newRow("U+009F") << QByteArray("\xc2\x9f") << false;
    QTest::newRow("U+00A1 is fine") << QByteArray("\xc2\xa1") << true;
    QTest::newRow("U+1680") << QByteArray("\xe1\x9a\x80") << false;
    QTest::newRow("U+2000") << QByteArray("\xe2\x80\x80") << false;
    QTest::newRow("U+200A") << QByteArray("\xe2\x80\x8a") << false;
    QTest::newRow("U+200B is fine") << QByteArray("\xe2\x80\x8b") << true;
    QTest::newRow("U+2029") << QByteArray("\xe2\x80\xa9") << false;
    QTest::newRow("U+202F") << QByteArray("\xe2\x80\xaf") << false;
    QTest::newRow("U+205F") << QByteArray("\xe2\x81\x9f") << false;
}

void tst_RequestParser::isValidName()
{
    QFETCH(QByteArray, name);
    QFETCH(bool, valid);
    QCOMPARE(cmq::protocol::isValidName(name), valid);
}

QTEST_APPLESS_MAIN(tst_RequestParser)

#include "tst_requestparser.moc"
