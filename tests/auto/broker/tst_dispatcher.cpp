// The dispatcher between a parsed request and its handler: the ACL's command matrix, the rate
// limit and the requests exempt from it, and that a request that passes reaches its handler.
// The router runs on an in-memory store, the session on a socket that never connects
// (dispatcherharness.h).

#include <QtTest>

#include "acl/aclmanager.h"
#include "dispatcherharness.h"
#include "handlers/refusalreplies.h"
#include "protocol/replies.h"

using namespace cmq;

namespace {

Config::RateLimit tightLimits()
{
    Config::RateLimit limits;
    limits.enabled = true;
    limits.globalRps = limits.ipGlobalRps = limits.publishRps = limits.ipPublishRps = 0.001;
    limits.globalBurst = limits.ipGlobalBurst = limits.publishBurst = limits.ipPublishBurst = 2;
    return limits;
}

struct Harness : test::DispatcherHarness
{
    explicit Harness(Roles roles, bool rateLimited = false)
        : DispatcherHarness(roles, rateLimited ? std::optional(tightLimits()) : std::nullopt)
    {
    }
};

} // namespace

class tst_Dispatcher : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void commandMatrix_data();
    void commandMatrix();
    void unknownExchangeTypes_data();
    void unknownExchangeTypes();
    void malformedLinesPassThroughTheRateLimit();
    void rateLimitAndItsExemptions();
};

void tst_Dispatcher::commandMatrix_data()
{
    QTest::addColumn<int>("roles");
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QByteArray>("reply"); // empty: the ACL's denial of the command
    const int sender = int(Role::Sender);
    const int receiver = int(Role::Receiver);
    QTest::newRow("qos, receiver") << receiver << QByteArray("qos 5")
                                   << QByteArray("Qos set to 5\n");
    QTest::newRow("qos, sender") << sender << QByteArray("qos 5") << QByteArray();
    QTest::newRow("heartbeat, sender") << sender << QByteArray("heartbeat 30")
                                       << QByteArray("Heartbeat 30\n");
    QTest::newRow("consume, sender") << sender << QByteArray("consume receiver_1_in")
                                     << QByteArray();
    QTest::newRow("publish, receiver") << receiver << QByteArray("publish ex rk {}")
                                       << QByteArray();
    QTest::newRow("fetch of nothing, receiver")
        << receiver << QByteArray("fetch receiver_1_in") << QByteArray("No messages\n");
    QTest::newRow("ack of nothing, sender")
        << sender << QByteArray("ack m1")
        << QByteArray("Error: Message m1 is not awaiting acknowledgement from this connection\n");
    QTest::newRow("bind to nothing, receiver")
        << receiver << QByteArray("bind receiver_1_in ex receiver_1_key")
        << QByteArray("Error: Queue 'receiver_1_in' not found\n");
}

void tst_Dispatcher::commandMatrix()
{
    QFETCH(int, roles);
    QFETCH(QByteArray, line);
    QFETCH(QByteArray, reply);
    Harness h{Roles(Role(roles))};
    if (reply.isEmpty()) {
        const protocol::Command command = protocol::parseRequest(line).request.command;
        reply = handlers::refusalLine(AclManager::commandDenied(Roles(Role(roles)), command));
    }
    QCOMPARE(h.run(line), reply);
}

// A type the registry does not know is refused as a malformed line, as the parser did before
// the registry listed the types: before the ACL (a sender hears of the type, not of the
// command), with one line for any unknown type, odd characters and extra words included.
void tst_Dispatcher::unknownExchangeTypes_data()
{
    QTest::addColumn<int>("roles");
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QByteArray>("reply");
    const int sender = int(Role::Sender);
    const int receiver = int(Role::Receiver);
    const QByteArray invalidType =
        "parse failed: Error: Invalid exchange type: expected direct, fanout or topic";
    QTest::newRow("unknown") << receiver << QByteArray("declare_exchange a headers")
                             << invalidType;
    QTest::newRow("unknown, sender") << sender << QByteArray("declare_exchange a headers")
                                     << invalidType;
    QTest::newRow("two types") << receiver << QByteArray("declare_exchange a topic fanout")
                               << invalidType;
    QTest::newRow("upper case") << receiver << QByteArray("declare_exchange a TOPIC")
                                << invalidType;
    QTest::newRow("control character") << receiver << QByteArray("declare_exchange a top\x01ic")
                                       << invalidType;
    QTest::newRow("256-byte type") << receiver << "declare_exchange a " + QByteArray(256, 't')
                                   << invalidType;
    QTest::newRow("bad name before the type")
        << receiver << QByteArray("declare_exchange a\x01 headers")
        << QByteArray("parse failed: Error: Invalid exchange name: must not contain spaces or "
                      "control characters");
    QTest::newRow("known, sender") << sender << QByteArray("declare_exchange a topic")
                                   << QByteArray();
}

void tst_Dispatcher::unknownExchangeTypes()
{
    QFETCH(int, roles);
    QFETCH(QByteArray, line);
    QFETCH(QByteArray, reply);
    Harness h{Roles(Role(roles))};
    if (reply.isEmpty())
        reply = handlers::refusalLine(
            AclManager::commandDenied(Roles(Role(roles)), protocol::Command::DeclareExchange));
    QCOMPARE(h.run(line), reply);
}

void tst_Dispatcher::malformedLinesPassThroughTheRateLimit()
{
    Harness h{Roles(Role::Receiver), true};
    QByteArrayList answers;
    for (int i = 0; i < 3; ++i) {
        h.dispatcher.refuseMalformed(h.session, "Unknown command\n",
                                     Reply([&](const QByteArray &l, quint64) { answers.append(l); }));
    }
    QCOMPARE(answers.size(), 3);
    QCOMPARE(answers[0], QByteArray("Unknown command\n"));
    QCOMPARE(answers[1], QByteArray("Unknown command\n"));
    QVERIFY2(answers[2].startsWith("Error: rate limit exceeded"), answers[2].constData());
}

void tst_Dispatcher::rateLimitAndItsExemptions()
{
    Harness h{Roles(Role::Receiver), true};
    h.router.declareExchange("ex", "receiver_1", [](Verdict s) { QVERIFY(s); });
    h.router.declareQueue("receiver_1_in", "receiver_1", [](Verdict s) { QVERIFY(s); });
    h.router.bind("receiver_1_in", "ex", "rk", [](Verdict s) { QVERIFY(s); });
    h.router.publish("sender_1", "ex", "rk", {{"m1", "{}"}}, [](const PublishOutcomes &) {});
    h.store.commitAll();

    QCOMPARE(h.run("fetch receiver_1_in"), QByteArray("Message: m1 {}\n"));
    QCOMPARE(h.run("qos 1"), QByteArray("Qos set to 1\n"));
    // The burst of 2 is spent.
    QVERIFY(h.run("qos 2").startsWith("Error: rate limit exceeded"));
    QCOMPARE(h.run("pong"), QByteArray()); // answers the broker's ping: never refused
    // Settling a delivery this connection holds frees its prefetch slot: never refused.
    QCOMPARE(h.run("ack m1"), QByteArray("ACK_CONFIRMED m1\n"));
    // An ack of nothing awaiting one pays like any request.
    QVERIFY(h.run("ack m1").startsWith("Error: rate limit exceeded"));
    QVERIFY(!h.dispatcher.isConsuming(h.session));
}

QTEST_GUILESS_MAIN(tst_Dispatcher)
#include "tst_dispatcher.moc"
