// Presence against the real broker (docs/PROTOCOL.md, "Presence"): a subscriber in a presence
// group is told who of its group is online, then who comes and goes (a leaver after the
// debounce time); a plain reconnect (disconnect, connect again) is seen offline then online, a
// bounce within the debounce time not at all; identities outside every group are refused;
// "presence off" stops it.

#include <memory>

#include <QElapsedTimer>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"

using cmq::test::BrokerProcess;
using cmq::test::TestClient;

class tst_Presence : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void comingAndGoing();
    void plainReconnect();
    void refusedOutsideEveryGroup();
    void offStopsIt();
    void malformed();

private:
    static void startBroker(BrokerProcess &broker);
};

void tst_Presence::startBroker(BrokerProcess &broker)
{
    broker.set("acl.presence_groups", R"([["receiver_1", "sender_1", "svc-a"]])");
    broker.set("acl.presence_debounce_ms", "200");
    QVERIFY2(broker.start(), broker.output().constData());
}

void tst_Presence::comingAndGoing()
{
    BrokerProcess broker;
    startBroker(broker);
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    // A request first: this blocking test client sends the end of its handshake with it.
    QCOMPARE(sender.request("heartbeat 60"), "Heartbeat 60");

    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    // Who is online comes with the reply; the subscriber itself is not listed.
    QCOMPARE(receiver.request("presence"), "Presence on");
    QCOMPARE(receiver.readLine(), "Presence: sender_1 online");

    // A second connection of sender_1 is not news; its last one closing is, after the debounce.
    TestClient sender2("sender_1");
    QVERIFY(sender2.connectTo(broker.port()));
    QCOMPARE(sender2.request("heartbeat 60"), "Heartbeat 60");
    sender.disconnect();
    sender2.disconnect();
    QCOMPARE(receiver.readLine(), "Presence: sender_1 offline");

    // A newcomer of the group.
    TestClient svcA("svc-a");
    QVERIFY(svcA.connectTo(broker.port()));
    // A request first: this blocking test client sends the end of its handshake with it.
    QCOMPARE(svcA.request("heartbeat 60"), "Heartbeat 60");
    QCOMPARE(receiver.readLine(), "Presence: svc-a online");
    // Nothing else was said in between: the next line is the reply to this request.
    QCOMPARE(receiver.request("qos 5"), "Qos set to 5");
    QVERIFY(broker.terminate());
}

void tst_Presence::plainReconnect()
{
    constexpr int DebounceMs = 2000; // the default; room for a reconnect on a busy machine
    BrokerProcess broker;
    broker.set("acl.presence_groups", R"([["receiver_1", "sender_1"]])");
    broker.set("acl.presence_debounce_ms", QString::number(DebounceMs));
    QVERIFY2(broker.start(), broker.output().constData());
    auto sender = std::make_unique<TestClient>("sender_1");
    QVERIFY(sender->connectTo(broker.port()));
    // A request first: this blocking test client sends the end of its handshake with it.
    QCOMPARE(sender->request("heartbeat 60"), "Heartbeat 60");
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QCOMPARE(receiver.request("presence"), "Presence on");
    QCOMPARE(receiver.readLine(), "Presence: sender_1 online");

    // Gone: told once the debounce time has passed, not before.
    QElapsedTimer sinceClose;
    sinceClose.start();
    sender->disconnect();
    QCOMPARE(receiver.readLine(), "Presence: sender_1 offline");
    // Timers may fire up to 5% early (Qt's coarse timers).
    QVERIFY2(sinceClose.elapsed() >= DebounceMs * 9 / 10,
             qPrintable(QString::number(sinceClose.elapsed())));

    // Back with a new connection: told at once.
    sender = std::make_unique<TestClient>("sender_1");
    QVERIFY(sender->connectTo(broker.port()));
    QCOMPARE(sender->request("heartbeat 60"), "Heartbeat 60");
    QCOMPARE(receiver.readLine(), "Presence: sender_1 online");

    // A bounce within the debounce time is not news in either direction.
    sender->disconnect();
    sender = std::make_unique<TestClient>("sender_1");
    QVERIFY(sender->connectTo(broker.port()));
    QCOMPARE(sender->request("heartbeat 60"), "Heartbeat 60");
    QVERIFY(receiver.nothingWithin(2 * DebounceMs));
    QCOMPARE(receiver.request("qos 5"), "Qos set to 5");
    QVERIFY(broker.terminate());
}

void tst_Presence::refusedOutsideEveryGroup()
{
    BrokerProcess broker;
    startBroker(broker);
    TestClient outsider("receiver_2");
    QVERIFY(outsider.connectTo(broker.port()));
    QCOMPARE(outsider.request("presence"),
             "Error: Permission denied: receiver_2 is in no acl.presence_groups group, so it "
             "may not see presence");
    // Its coming and going is not told to the group either.
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QCOMPARE(receiver.request("presence"), "Presence on");
    TestClient outsider2("receiver_2");
    QVERIFY(outsider2.connectTo(broker.port()));
    QCOMPARE(outsider2.request("qos 1"), "Qos set to 1");
    QCOMPARE(receiver.request("qos 5"), "Qos set to 5");
    QVERIFY(broker.terminate());
}

void tst_Presence::offStopsIt()
{
    BrokerProcess broker;
    startBroker(broker);
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QCOMPARE(receiver.request("presence on"), "Presence on");
    QCOMPARE(receiver.request("presence off"), "Presence off");
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    QCOMPARE(sender.request("heartbeat 60"), "Heartbeat 60");
    QCOMPARE(receiver.request("qos 5"), "Qos set to 5");
    // On again: told who is online now.
    QCOMPARE(receiver.request("presence"), "Presence on");
    QCOMPARE(receiver.readLine(), "Presence: sender_1 online");
    QVERIFY(broker.terminate());
}

void tst_Presence::malformed()
{
    BrokerProcess broker;
    startBroker(broker);
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QCOMPARE(receiver.request("presence maybe"),
             "Error: Invalid presence mode: expected on or off");
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_Presence)
#include "tst_33_presence.moc"
