// The Client against a scripted broker on loopback (fakebroker.h): the protocol conversation it
// holds, what it does with each answer to a publish, and how it reacts to a broker that goes
// silent, says it is shutting down, or drops the connection. Receiving and requests are
// tst_clientdelivery; the real broker is exercised by the integration tests
// (tests/integration/tst_2x_*).

#include <QSignalSpy>
#include <QtTest>

#include "client/blockingclient.h"
#include "client/messageid.h"
#include "fakebroker.h"

using namespace clienttest;

class tst_Client : public QObject, public clienttest::ClientFixture
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void connectsAndAsksForHeartbeats();
    void brokerWithoutHeartbeatsIsUsable();
    void refusedIdentityEndsConnectAtOnce();
    void unreachableFirstAddressFallsThrough();
    void sendSealsForReceiverAndConfirmsOnAck();
    void payloadsArePaddedUnlessTurnedOff();
    void replyToPublish_data();
    void replyToPublish();
    void unknownKeyWaitsForReceiver();
    void publishWindowLimitsInFlight();
    void resendAfterReconnectIsByteIdentical();
    void silentBrokerIsDeclaredDead();
    void pingIsAnswered();
    void shutdownNoticeFailsOverAtOnce();
    void startRefusesBadConfiguration();
};

void tst_Client::initTestCase()
{
    QVERIFY(prepareKeys());
}

void tst_Client::connectsAndAsksForHeartbeats()
{
    FakeBroker broker;
    Client client(options({&broker}));
    QSignalSpy connected(&client, &Client::connected);
    QVERIFY(client.start().ok());
    QCOMPARE(client.name(), "svc-a"); // the certificate's CN
    QTRY_COMPARE_WITH_TIMEOUT(connected.size(), 1, Patience);
    QCOMPARE(client.state(), ConnectionState::Connected);
    QCOMPARE(broker.received.at(0).value(0), "heartbeat 1"); // the very first line
    QCOMPARE(client.currentBroker(), broker.address().toString());
}

void tst_Client::brokerWithoutHeartbeatsIsUsable()
{
    // The original broker answers "Unknown command" to heartbeat: still a working connection,
    // and its silence is not taken for death.
    FakeBroker old;
    old.withoutHeartbeats = true;
    old.keys.insert("svc-b", m_peerKeys.publicKey.toBase64());
    Client client(options({&old}));
    QSignalSpy drained(&client, &Client::outboxDrained);
    QSignalSpy disconnected(&client, &Client::disconnected);
    QVERIFY(client.start().ok());
    QVERIFY(client.send("svc-b", "to the old broker").ok());
    QTRY_COMPARE_WITH_TIMEOUT(drained.size(), 1, Patience);
    QTest::qWait(4500); // longer than the dead-server limit for heartbeat 1 s
    QCOMPARE(disconnected.size(), 0);
}

void tst_Client::refusedIdentityEndsConnectAtOnce()
{
    // The broker completes TLS, then turns the CN away with one line and closes.
    FakeBroker refusing;
    refusing.refuseWith = "Error: Unauthorized: certificate CN 'svc-a' has no role";
    ClientOptions o = options({&refusing});
    o.connectTimeoutMs = 10000;
    BlockingClient client(o);
    QElapsedTimer timer;
    timer.start();
    const cmq::Status connected = client.connect(20000);
    QVERIFY(!connected.ok());
    QVERIFY(client.refusedByBroker());
    QVERIFY2(connected.error().contains("Unauthorized"), qPrintable(connected.error()));
    QVERIFY2(timer.elapsed() < 5000, "a refusal must not wait for the connect timeout");
}

void tst_Client::unreachableFirstAddressFallsThrough()
{
    FakeBroker broker;
    ClientOptions o = options({&broker});
    o.brokers.prepend({QStringLiteral("127.0.0.1"), cmq::test::freePort()}); // nothing listens
    Client client(o);
    QSignalSpy failed(&client, &Client::connectionFailed);
    QSignalSpy connected(&client, &Client::connected);
    QVERIFY(client.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(connected.size(), 1, Patience);
    QCOMPARE(failed.size(), 1);
    QCOMPARE(failed.first().at(2).toBool(), false); // unreachable, not refused
    QCOMPARE(connected.first().at(0).toString(), broker.address().toString());
}

void tst_Client::sendSealsForReceiverAndConfirmsOnAck()
{
    FakeBroker broker;
    broker.keys.insert("svc-b", m_peerKeys.publicKey.toBase64());
    Client client(options({&broker}));
    QSignalSpy states(&client, &Client::messageStateChanged);
    QSignalSpy drained(&client, &Client::outboxDrained);
    QVERIFY(client.start().ok());
    const auto id = client.send("svc-b", "hello, svc-b");
    QVERIFY2(id.ok(), qPrintable(id.error()));
    QVERIFY(parseMessageId(id.value()).sender == "svc-a");
    QCOMPARE(parseMessageId(id.value()).receiver, "svc-b");
    QTRY_COMPARE_WITH_TIMEOUT(drained.size(), 1, Patience);
    QCOMPARE(client.pendingCount(), 0);

    QCOMPARE(broker.lines("get_public_key").value(0), "get_public_key svc-b");
    const QList<QByteArray> publishes = broker.lines("publish ");
    QCOMPARE(publishes.size(), 1);
    QVERIFY(publishes.first().startsWith("publish CipherMQ_exchange svc-b_key {"));
    QVERIFY(!publishes.first().contains("hello")); // only ciphertext on the wire
    const auto parsed = crypto::parseEnvelopeJson(FakeBroker::envelopeJson(publishes.first()));
    QVERIFY(parsed.ok());
    QCOMPARE(parsed->messageId, id.value());
    QCOMPARE(parsed->receiverClientId, "svc-b");
    QVERIFY(parsed->sentTime.isValid());
    QCOMPARE(crypto::open(parsed->sealed, m_peerKeys).value(), "hello, svc-b");
    QVERIFY(parsed->sealed.padded); // the default

    QList<MessageState> seen;
    for (const auto &emission : std::as_const(states))
        seen.append(emission.at(1).value<MessageState>());
    QCOMPARE(seen, (QList<MessageState>{MessageState::Queued, MessageState::Sent,
                                        MessageState::Delivered}));
}

// The broker sees the size bucket, not the size: a short and a longer payload make ciphertexts
// of one length. Turned off, the envelope is the existing clients' form.
void tst_Client::payloadsArePaddedUnlessTurnedOff()
{
    for (const bool padded : {true, false}) {
        FakeBroker broker;
        broker.keys.insert("svc-b", m_peerKeys.publicKey.toBase64());
        ClientOptions settings = options({&broker});
        settings.padPayloads = padded;
        Client client(settings);
        QSignalSpy drained(&client, &Client::outboxDrained);
        QVERIFY(client.start().ok());
        QVERIFY(client.send("svc-b", "hi").ok());
        QVERIFY(client.send("svc-b", QByteArray(200, 'x')).ok());
        QTRY_VERIFY_WITH_TIMEOUT(drained.size() >= 1 && client.pendingCount() == 0, Patience);
        const QList<QByteArray> publishes = broker.lines("publish ");
        QCOMPARE(publishes.size(), 2);
        QList<qsizetype> sizes;
        for (const QByteArray &line : publishes) {
            const auto parsed = crypto::parseEnvelopeJson(FakeBroker::envelopeJson(line));
            QVERIFY(parsed.ok());
            QCOMPARE(parsed->sealed.padded, padded);
            QCOMPARE(line.contains(R"("padding":"buckets-v1")"), padded);
            sizes << QByteArray::fromBase64(parsed->sealed.ciphertext).size();
        }
        if (padded)
            QCOMPARE(sizes, (QList<qsizetype>{256 + crypto::TagSize, 256 + crypto::TagSize}));
        else
            QCOMPARE(sizes, (QList<qsizetype>{2 + crypto::TagSize, 200 + crypto::TagSize}));
    }
}

void tst_Client::replyToPublish_data()
{
    QTest::addColumn<QByteArray>("firstReply"); // "%ID%" stands for the message id
    QTest::addColumn<MessageState>("firstState");
    QTest::addColumn<MessageState>("finalState");
    QTest::addColumn<int>("publishes");
    QTest::newRow("duplicate confirms") << QByteArray("Error: Duplicate message %ID% ignored")
                                        << MessageState::Delivered << MessageState::Delivered << 1;
    QTest::newRow("unroutable waits for the receiver")
        << QByteArray("Error: No queues bound to exchange 'CipherMQ_exchange' with routing key "
                      "'svc-b_key'")
        << MessageState::WaitingForReceiver << MessageState::Delivered << 2;
    QTest::newRow("storage trouble is retried")
        << QByteArray("Error: storage unavailable") << MessageState::Queued
        << MessageState::Delivered << 2;
    QTest::newRow("malformed fails for good") << QByteArray("Invalid message format: nope")
                                              << MessageState::Failed << MessageState::Failed << 1;
    QTest::newRow("not permitted fails for good")
        << QByteArray("Error: Permission denied: 'publish' is not allowed for role receiver")
        << MessageState::Failed << MessageState::Failed << 1;
}

void tst_Client::replyToPublish()
{
    QFETCH(QByteArray, firstReply);
    QFETCH(MessageState, firstState);
    QFETCH(MessageState, finalState);
    QFETCH(int, publishes);
    FakeBroker broker;
    broker.keys.insert("svc-b", m_peerKeys.publicKey.toBase64());
    int seen = 0;
    broker.script = [&](const QByteArray &line) -> std::optional<QList<QByteArray>> {
        if (!line.startsWith("publish ") || seen++ > 0)
            return std::nullopt;
        return QList<QByteArray>{
            QByteArray(firstReply).replace("%ID%", FakeBroker::envelopeId(line))};
    };
    Client client(options({&broker}));
    QSignalSpy states(&client, &Client::messageStateChanged);
    QVERIFY(client.start().ok());
    const auto id = client.send("svc-b", "payload");
    QVERIFY(id.ok());
    const auto finalSeen = [&] {
        return !states.isEmpty() && states.last().at(1).value<MessageState>() == finalState &&
               (finalState != MessageState::Delivered || client.pendingCount() == 0) &&
               (finalState != MessageState::Failed || client.pendingCount() == 0);
    };
    QTRY_VERIFY_WITH_TIMEOUT(finalSeen(), Patience);
    bool sawFirst = false;
    for (const auto &emission : std::as_const(states)) {
        if (emission.at(1).value<MessageState>() == firstState) {
            sawFirst = true;
            if (firstState != MessageState::Queued && firstState != MessageState::Delivered)
                QVERIFY(!emission.at(2).toString().isEmpty()); // says why
        }
    }
    QVERIFY(sawFirst);
    if (finalState == MessageState::Failed) {
        QTest::qWait(200); // a refused message is never retried
    }
    QCOMPARE(broker.count("publish "), publishes);
    QCOMPARE(client.pendingCount(), 0);
}

void tst_Client::unknownKeyWaitsForReceiver()
{
    FakeBroker broker; // svc-b has no key yet
    Client client(options({&broker}));
    QSignalSpy states(&client, &Client::messageStateChanged);
    QSignalSpy drained(&client, &Client::outboxDrained);
    QVERIFY(client.start().ok());
    QVERIFY(client.send("svc-b", "early bird").ok());
    QTRY_VERIFY_WITH_TIMEOUT(std::any_of(states.cbegin(), states.cend(),
                                         [](const QList<QVariant> &e) {
                                             return e.at(1).value<MessageState>() ==
                                                    MessageState::WaitingForReceiver;
                                         }),
                             Patience);
    QCOMPARE(broker.count("publish "), 0);
    QVERIFY(broker.count("get_public_key svc-b") >= 1);
    broker.keys.insert("svc-b", m_peerKeys.publicKey.toBase64()); // svc-b comes up
    QTRY_COMPARE_WITH_TIMEOUT(drained.size(), 1, Patience);
    const QByteArray publish = broker.lines("publish ").value(0);
    const auto parsed = crypto::parseEnvelopeJson(FakeBroker::envelopeJson(publish));
    QCOMPARE(crypto::open(parsed->sealed, m_peerKeys).value(), "early bird");
}

void tst_Client::publishWindowLimitsInFlight()
{
    FakeBroker broker;
    broker.keys.insert("svc-b", m_peerKeys.publicKey.toBase64());
    QList<QByteArray> held;
    broker.script = [&](const QByteArray &line) -> std::optional<QList<QByteArray>> {
        if (!line.startsWith("publish "))
            return std::nullopt;
        held.append("ACK " + FakeBroker::envelopeId(line));
        return QList<QByteArray>{};
    };
    ClientOptions o = options({&broker});
    o.publishWindow = 3;
    Client client(o);
    QSignalSpy drained(&client, &Client::outboxDrained);
    QVERIFY(client.start().ok());
    for (int i = 0; i < 10; ++i)
        QVERIFY(client.send("svc-b", "m" + QByteArray::number(i)).ok());
    QTRY_COMPARE_WITH_TIMEOUT(held.size(), 3, Patience);
    QTest::qWait(100); // nothing more may come while three are unanswered
    QCOMPARE(held.size(), 3);
    broker.push(held.first()); // one answered: one more goes out
    QTRY_COMPARE_WITH_TIMEOUT(held.size(), 4, Patience);
    // Answer everything as it comes.
    int answered = 1;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            while (answered < held.size())
                broker.push(held.at(answered++));
            return drained.size() == 1;
        }(),
        Patience);
    QCOMPARE(held.size(), 10);
}

void tst_Client::resendAfterReconnectIsByteIdentical()
{
    FakeBroker broker;
    broker.keys.insert("svc-b", m_peerKeys.publicKey.toBase64());
    bool dropFirst = true;
    broker.script = [&](const QByteArray &line) -> std::optional<QList<QByteArray>> {
        if (line.startsWith("publish ") && dropFirst) {
            dropFirst = false;
            QTimer::singleShot(0, [&] { broker.closeLast(); }); // taken, never answered
            return QList<QByteArray>{};
        }
        return std::nullopt;
    };
    Client client(options({&broker}));
    QSignalSpy states(&client, &Client::messageStateChanged);
    QSignalSpy drained(&client, &Client::outboxDrained);
    QSignalSpy disconnected(&client, &Client::disconnected);
    QVERIFY(client.start().ok());
    const auto id = client.send("svc-b", "once");
    QTRY_COMPARE_WITH_TIMEOUT(drained.size(), 1, Patience);
    QCOMPARE(disconnected.size(), 1);
    QCOMPARE(broker.sockets.size(), 2);
    const QByteArray first = broker.lines("publish ", 0).value(0);
    const QByteArray second = broker.lines("publish ", 1).value(0);
    QVERIFY(!first.isEmpty());
    QCOMPARE(second, first); // same id, same ciphertext: the broker can dedupe it
    int delivered = 0;
    for (const auto &emission : std::as_const(states))
        delivered += emission.at(1).value<MessageState>() == MessageState::Delivered;
    QCOMPARE(delivered, 1);
}

void tst_Client::silentBrokerIsDeclaredDead()
{
    FakeBroker dead;
    dead.silent = true; // accepts, answers the heartbeat request, then never a word (no PING)
    FakeBroker alive;
    Client client(options({&dead, &alive}));
    QSignalSpy connected(&client, &Client::connected);
    QSignalSpy disconnected(&client, &Client::disconnected);
    QVERIFY(client.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(connected.size(), 1, Patience);
    QCOMPARE(connected.at(0).at(0).toString(), dead.address().toString());
    QElapsedTimer silence;
    silence.start();
    // heartbeat 1 s: dead after 2 × 1 s + 2 s without a line.
    QTRY_COMPARE_WITH_TIMEOUT(connected.size(), 2, Patience);
    QVERIFY2(silence.elapsed() >= 3500, qPrintable(QString::number(silence.elapsed())));
    QCOMPARE(connected.at(1).at(0).toString(), alive.address().toString());
    QVERIFY(disconnected.first().at(0).toString().contains("considered dead"));
}

void tst_Client::pingIsAnswered()
{
    FakeBroker broker;
    Client client(options({&broker}));
    QSignalSpy connected(&client, &Client::connected);
    QVERIFY(client.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(connected.size(), 1, Patience);
    for (int i = 0; i < 3; ++i)
        broker.push("PING");
    QTRY_COMPARE_WITH_TIMEOUT(broker.count("pong"), 3, Patience);
    QCOMPARE(client.state(), ConnectionState::Connected);
}

void tst_Client::shutdownNoticeFailsOverAtOnce()
{
    FakeBroker stopping;
    stopping.keys.insert("svc-b", m_peerKeys.publicKey.toBase64());
    QByteArray heldAck;
    stopping.script = [&](const QByteArray &line) -> std::optional<QList<QByteArray>> {
        if (!line.startsWith("publish "))
            return std::nullopt;
        heldAck = "ACK " + FakeBroker::envelopeId(line);
        return QList<QByteArray>{};
    };
    FakeBroker next;
    Client client(options({&stopping, &next}));
    QSignalSpy connected(&client, &Client::connected);
    QSignalSpy drained(&client, &Client::outboxDrained);
    QVERIFY(client.start().ok());
    QVERIFY(client.send("svc-b", "in flight").ok());
    QTRY_VERIFY_WITH_TIMEOUT(!heldAck.isEmpty(), Patience);
    QElapsedTimer sinceNotice;
    sinceNotice.start();
    // The notice, then the reply the broker still owes (it commits before closing).
    stopping.push("Server shutting down\n" + heldAck);
    QTRY_COMPARE_WITH_TIMEOUT(connected.size(), 2, Patience);
    QVERIFY2(sinceNotice.elapsed() < 2000, "must not wait for the heartbeat timeout");
    QCOMPARE(connected.at(1).at(0).toString(), next.address().toString());
    QTRY_COMPARE_WITH_TIMEOUT(drained.size(), 1, Patience);
    QCOMPARE(next.count("publish "), 0); // the late ACK confirmed it
}
void tst_Client::startRefusesBadConfiguration()
{
    FakeBroker broker;
    {
        ClientOptions o = options({&broker});
        o.brokers.clear();
        QVERIFY(!Client(o).start().ok());
    }
    {
        ClientOptions o = options({&broker});
        o.tls.keyPath = m_dir.filePath("missing.key");
        QVERIFY(!Client(o).start().ok());
    }
    {
        ClientOptions o = options({&broker});
        o.keyPairPath = m_dir.filePath("missing.x25519");
        Client client(o);
        QVERIFY(!client.start().ok());
        QVERIFY(!client.send("svc-b", "x").ok()); // not started
    }
    {
        ClientOptions o = options({&broker});
        o.keyPairPath.clear();
        Client client(o);
        QVERIFY(client.start().ok());   // sending needs no key pair of ours...
        QVERIFY(!client.listen().ok()); // ...receiving does
        QVERIFY(!client.send("bad name", "x").ok());
    }
}

QTEST_GUILESS_MAIN(tst_Client)
#include "tst_client.moc"
