// The Client against a scripted broker on loopback (mTLS with the test certificates): the
// protocol conversation it holds, what it does with each kind of answer, and how it reacts to a
// broker that goes silent, says it is shutting down, or drops the connection. The real broker is
// exercised by the integration tests (tests/integration/tst_2x_*).

#include <functional>
#include <optional>

#include <QJsonDocument>
#include <QSignalSpy>
#include <QSslServer>
#include <QSslSocket>
#include <QTemporaryDir>
#include <QtTest>

#include "client/blockingclient.h"
#include "client/client.h"
#include "client/messageid.h"
#include "crypto/envelopecrypto.h"
#include "crypto/keypair.h"
#include "testenv.h"
#include "tls/tlsidentity.h"

using namespace cmq::client;
namespace crypto = cmq::crypto;
using cmq::test::certFile;

namespace {

constexpr int Patience = 15000; // QTRY limit: local, but the CI machine is shared

// A broker that speaks the line protocol from a script: by default it answers every command
// as the real broker would on success; a test overrides lines it cares about. Every line it
// receives is recorded per connection.
class FakeBroker
{
public:
    // Returns the reply lines for a request, or nullopt for the default answer.
    using Script = std::function<std::optional<QList<QByteArray>>(const QByteArray &line)>;

    FakeBroker()
    {
        const auto config = cmq::tls::serverConfiguration(
            {certFile("server.crt"), certFile("server.key"), certFile("ca.crt")});
        if (!config)
            qFatal("server TLS: %s", qPrintable(config.error()));
        m_server.setSslConfiguration(config.value());
        QObject::connect(&m_server, &QSslServer::pendingConnectionAvailable, &m_server, [this] {
            while (m_server.hasPendingConnections()) {
                auto *socket = qobject_cast<QSslSocket *>(m_server.nextPendingConnection());
                const int index = int(sockets.size());
                sockets.append(socket);
                received.append(QList<QByteArray>());
                QObject::connect(socket, &QSslSocket::readyRead, socket,
                                 [this, socket, index] { onRead(socket, index); });
            }
        });
        if (!m_server.listen(QHostAddress::LocalHost, 0))
            qFatal("fake broker cannot listen");
    }

    quint16 port() const { return m_server.serverPort(); }
    BrokerAddress address() const { return {QStringLiteral("127.0.0.1"), port()}; }

    void push(const QByteArray &line, int connection = -1)
    {
        QSslSocket *socket = connection < 0 ? sockets.last() : sockets.at(connection);
        socket->write(line + '\n');
    }
    void closeLast() { sockets.last()->disconnectFromHost(); }
    void stop()
    {
        m_server.close();
        for (QSslSocket *socket : std::as_const(sockets))
            socket->abort();
    }

    // Lines of one connection that start with `prefix`.
    QList<QByteArray> lines(const QByteArray &prefix, int connection = -1) const
    {
        QList<QByteArray> found;
        if (received.isEmpty())
            return found;
        for (const QByteArray &line :
             received.at(connection < 0 ? received.size() - 1 : connection))
            if (line.startsWith(prefix))
                found.append(line);
        return found;
    }
    int count(const QByteArray &prefix) const
    {
        int n = 0;
        for (int i = 0; i < received.size(); ++i)
            n += int(lines(prefix, i).size());
        return n;
    }

    Script script;
    QHash<QByteArray, QByteArray> keys; // client id → base64 public key
    bool silent = false;                // answer nothing at all after the heartbeat
    QByteArray refuseWith;              // answer the first line with this, then close
    bool withoutHeartbeats = false;     // a broker that does not know the extension
    QList<QSslSocket *> sockets;
    QList<QList<QByteArray>> received;

private:
    void onRead(QSslSocket *socket, int index)
    {
        m_buffers[index] += socket->readAll();
        for (qsizetype end; (end = m_buffers[index].indexOf('\n')) >= 0;) {
            const QByteArray line = m_buffers[index].left(end);
            m_buffers[index].remove(0, end + 1);
            received[index].append(line);
            if (qEnvironmentVariableIsSet("FAKE_BROKER_TRACE"))
                qDebug("fake %d <- %s", index, line.left(120).constData());
            if (!refuseWith.isEmpty()) {
                socket->write(refuseWith + '\n');
                socket->disconnectFromHost();
                return;
            }
            for (const QByteArray &reply : answer(line))
                socket->write(reply + '\n');
        }
    }

    QList<QByteArray> answer(const QByteArray &line)
    {
        if (line.startsWith("heartbeat "))
            return {withoutHeartbeats ? QByteArray("Unknown command")
                                      : "Heartbeat " + line.mid(10)};
        if (silent)
            return {};
        if (script) {
            if (auto scripted = script(line))
                return *scripted;
        }
        const qsizetype space = line.indexOf(' ');
        const QByteArray command = space < 0 ? line : line.left(space);
        const QByteArray rest = space < 0 ? QByteArray() : line.mid(space + 1);
        if (command == "register_public_key")
            return {"Public key registered"};
        if (command == "declare_exchange")
            return {"Exchange declared"};
        if (command == "declare_queue")
            return {"Queue declared"};
        if (command == "bind")
            return {"Queue bound"};
        if (command == "qos")
            return {"Qos set to " + rest};
        if (command == "consume")
            return {"Subscribed to queue"};
        if (command == "get_public_key")
            return {keys.contains(rest) ? "Public key: " + keys.value(rest)
                                        : QByteArray("Public key not found")};
        if (command == "publish")
            return {"ACK " + envelopeId(line)};
        if (command == "ack")
            return {"ACK_CONFIRMED " + rest};
        if (command == "nack")
            return {"NACK_CONFIRMED " + rest.left(rest.indexOf(' '))};
        if (command == "pong")
            return {};
        return {"Unknown command"};
    }

public:
    static QByteArray envelopeJson(const QByteArray &publishLine)
    {
        // "publish <exchange> <routing key> <json>"
        qsizetype at = -1;
        for (int spaces = 0; spaces < 3; ++spaces)
            at = publishLine.indexOf(' ', at + 1);
        return publishLine.mid(at + 1);
    }
    static QByteArray envelopeId(const QByteArray &publishLine)
    {
        return QJsonDocument::fromJson(envelopeJson(publishLine))
            .object()
            .value("message_id")
            .toString()
            .toUtf8();
    }

private:
    QSslServer m_server;
    QHash<int, QByteArray> m_buffers;
};

// A "Message:" line sealed for `receiver`, as the broker would push it.
QByteArray deliveryLine(const QString &id, const QByteArray &payload, const QByteArray &receiverKey,
                        const QJsonObject &extra = {})
{
    const auto sealed = crypto::seal(payload, receiverKey);
    const QByteArray json = crypto::buildEnvelopeJson(id, QStringLiteral("svc-a"), sealed.value(),
                                                      QDateTime::currentDateTimeUtc(), extra);
    return "Message: " + id.toUtf8() + ' ' + json;
}

} // namespace

namespace cmq::client {
// For QCOMPARE's failure messages.
char *toString(MessageState state)
{
    return qstrdup(qPrintable(stateName(state)));
}
} // namespace cmq::client

class tst_Client : public QObject
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
    void listenReplaysTopologyAfterReconnect();
    void redeliveriesReachTheApplicationOnce();
    void deliveryMetaReachesTheApplication();
    void brokerWithoutDeliveryMetaIsUsable();
    void undecryptableMessageIsRejected();
    void pausedDeliveriesAreHeldUnacked();
    void requestGetsCorrelatedReply();
    void requestTimesOutAndWithdrawsMessage();
    void handlerAnswersRequest();
    void startRefusesBadConfiguration();

private:
    ClientOptions options(const QList<FakeBroker *> &brokers) const;
    QTemporaryDir m_dir;
    crypto::KeyPair m_ourKeys;  // svc-a, the client under test
    crypto::KeyPair m_peerKeys; // svc-b
    QString m_keyPath;
};

void tst_Client::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_ourKeys = crypto::generateKeyPair().value();
    m_peerKeys = crypto::generateKeyPair().value();
    m_keyPath = m_dir.filePath("svc-a.key");
    QVERIFY(crypto::saveKeyPair(m_ourKeys, m_keyPath).ok());
}

ClientOptions tst_Client::options(const QList<FakeBroker *> &brokers) const
{
    ClientOptions o;
    for (FakeBroker *broker : brokers)
        o.brokers.append(broker->address());
    o.tls = {certFile("svc-a.crt"), certFile("svc-a.key"), certFile("ca.crt")};
    o.keyPairPath = m_keyPath;
    o.heartbeatSec = 1;
    o.connectTimeoutMs = 3000;
    o.backoffInitialMs = 50;
    o.backoffMaxMs = 200;
    o.retryDelayMs = 50;
    return o;
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

void tst_Client::listenReplaysTopologyAfterReconnect()
{
    FakeBroker broker;
    Client client(options({&broker}));
    QSignalSpy subscribed(&client, &Client::subscribed);
    QVERIFY(client.listen().ok());
    QVERIFY(client.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);
    QCOMPARE(subscribed.first().at(0).toString(), "svc-a_queue");
    const QList<QByteArray> expected{
        "heartbeat 1",
        "register_public_key " + m_ourKeys.publicKey.toBase64(),
        "declare_exchange CipherMQ_exchange",
        "declare_queue svc-a_queue",
        "bind svc-a_queue CipherMQ_exchange svc-a_key",
        "qos 64",
        "consume svc-a_queue with-meta",
    };
    QCOMPARE(broker.received.at(0), expected);
    broker.closeLast();
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 2, Patience);
    QCOMPARE(broker.received.at(1), expected);
}

void tst_Client::redeliveriesReachTheApplicationOnce()
{
    FakeBroker broker;
    Client client(options({&broker}));
    QList<IncomingMessage> handled;
    QVERIFY(client
                .listen([&](const IncomingMessage &m) -> std::optional<QByteArray> {
                    handled.append(m);
                    return std::nullopt;
                })
                .ok());
    QSignalSpy subscribed(&client, &Client::subscribed);
    QVERIFY(client.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);
    const QString id = makeMessageId("svc-b", newCorrelationId(), "svc-a");
    const QByteArray line = deliveryLine(id, "exactly once", m_ourKeys.publicKey);
    broker.push(line);
    QTRY_COMPARE_WITH_TIMEOUT(broker.count("ack "), 1, Patience);
    broker.push("Redelivered: " + id.toUtf8());
    broker.push(line);
    QTRY_COMPARE_WITH_TIMEOUT(broker.count("ack "), 2, Patience); // acked again...
    QCOMPARE(handled.size(), 1);                                  // ...but handled once
    QCOMPARE(handled.first().payload, "exactly once");
    QCOMPARE(handled.first().from, "svc-b");
    QCOMPARE(handled.first().kind, MessageKind::Message);
    QVERIFY(!handled.first().redelivered());
    QCOMPARE(client.duplicatesDropped(), 1);
    QCOMPARE(broker.lines("ack ").value(0), "ack " + id.toUtf8());
}

void tst_Client::deliveryMetaReachesTheApplication()
{
    FakeBroker broker;
    Client client(options({&broker}));
    QList<IncomingMessage> handled;
    QVERIFY(client
                .listen([&](const IncomingMessage &m) -> std::optional<QByteArray> {
                    handled.append(m);
                    return std::nullopt;
                })
                .ok());
    QSignalSpy subscribed(&client, &Client::subscribed);
    QVERIFY(client.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);
    QCOMPARE(subscribed.first().at(0).toString(), "svc-a_queue");
    // The id and reply_to claim svc-b; the broker attests svc-c.
    const QString id = makeMessageId("svc-b", newCorrelationId(), "svc-a");
    broker.push("Meta: " + id.toUtf8() +
                R"( {"delivery_count":3,"published_at":"2026-01-02T03:04:05.678Z",)"
                R"("redelivered":true,"sender":"svc-c","dead_letter_reason":"expired","x":1,)"
                R"("dead_letter_original_queue":"svc-a_in","dead_letter_delivery_count":4,)"
                R"("dead_lettered_at":"2026-01-02T03:04:06.001Z"})");
    broker.push(deliveryLine(id, "attested", m_ourKeys.publicKey, {{"reply_to", "svc-b"}}));
    QTRY_COMPARE_WITH_TIMEOUT(handled.size(), 1, Patience);
    const IncomingMessage &m = handled.first();
    QCOMPARE(m.payload, "attested");
    QCOMPARE(m.from, "svc-b");
    QCOMPARE(m.sender(), "svc-c");
    QVERIFY(m.isAttested());
    QCOMPARE(m.publishedAt(), QDateTime::fromString("2026-01-02T03:04:05.678Z", Qt::ISODateWithMs));
    QVERIFY(m.redelivered());
    QCOMPARE(m.deliveryCount(), 3);
    QCOMPARE(m.deadLetterReason(), "expired");
    QCOMPARE(m.deadLetterOriginalQueue(), "svc-a_in");
    QCOMPARE(m.deadLetteredAt(),
             QDateTime::fromString("2026-01-02T03:04:06.001Z", Qt::ISODateWithMs));
    QCOMPARE(m.deadLetterDeliveryCount(), 4);
    QTRY_COMPARE_WITH_TIMEOUT(broker.count("ack "), 1, Patience);
}

void tst_Client::brokerWithoutDeliveryMetaIsUsable()
{
    // A broker from before delivery metadata reads "with-meta" as part of the queue name.
    FakeBroker broker;
    broker.script = [](const QByteArray &line) -> std::optional<QList<QByteArray>> {
        if (line.endsWith(" with-meta"))
            return QList<QByteArray>{
                "Error: Invalid queue name: must not contain spaces or control characters"};
        return std::nullopt;
    };
    Client client(options({&broker}));
    QList<IncomingMessage> handled;
    QVERIFY(client
                .listen([&](const IncomingMessage &m) -> std::optional<QByteArray> {
                    handled.append(m);
                    return std::nullopt;
                })
                .ok());
    QSignalSpy subscribed(&client, &Client::subscribed);
    QSignalSpy errors(&client, &Client::errorOccurred);
    QVERIFY(client.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);
    QCOMPARE(subscribed.first().at(0).toString(), "svc-a_queue");
    QCOMPARE(broker.lines("consume "),
             (QList<QByteArray>{"consume svc-a_queue with-meta", "consume svc-a_queue"}));
    QCOMPARE(errors.size(), 0);
    const QString id = makeMessageId("svc-b", newCorrelationId(), "svc-a");
    broker.push("Redelivered: " + id.toUtf8());
    broker.push(deliveryLine(id, "old broker", m_ourKeys.publicKey));
    QTRY_COMPARE_WITH_TIMEOUT(handled.size(), 1, Patience);
    QVERIFY(!handled.first().isAttested());
    QVERIFY(handled.first().redelivered());
    QCOMPARE(handled.first().deliveryCount(), 0);
    // Each new connection asks again: it may be a newer broker.
    broker.closeLast();
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 2, Patience);
    QCOMPARE(broker.lines("consume ").value(0), "consume svc-a_queue with-meta");
}

void tst_Client::undecryptableMessageIsRejected()
{
    FakeBroker broker;
    Client client(options({&broker}));
    int handled = 0;
    QVERIFY(client
                .listen([&](const IncomingMessage &) -> std::optional<QByteArray> {
                    ++handled;
                    return std::nullopt;
                })
                .ok());
    QSignalSpy subscribed(&client, &Client::subscribed);
    QSignalSpy rejected(&client, &Client::messageRejected);
    QVERIFY(client.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("cannot be opened"));
    broker.push(deliveryLine("wrong-key-1", "for svc-b only", m_peerKeys.publicKey));
    QTRY_COMPARE_WITH_TIMEOUT(rejected.size(), 1, Patience);
    QCOMPARE(rejected.first().at(0).toString(), "wrong-key-1");
    QVERIFY(rejected.first().at(1).toString().contains("another receiver"));
    QTRY_COMPARE_WITH_TIMEOUT(broker.lines("nack ").value(0), "nack wrong-key-1 drop", Patience);
    QCOMPARE(handled, 0);
}

void tst_Client::pausedDeliveriesAreHeldUnacked()
{
    FakeBroker broker;
    Client client(options({&broker}));
    QList<QByteArray> handled;
    QVERIFY(client
                .listen([&](const IncomingMessage &m) -> std::optional<QByteArray> {
                    handled.append(m.payload);
                    return std::nullopt;
                })
                .ok());
    QSignalSpy subscribed(&client, &Client::subscribed);
    QVERIFY(client.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);
    client.setListeningPaused(true);
    broker.push(deliveryLine("held-1", "one", m_ourKeys.publicKey));
    broker.push(deliveryLine("held-2", "two", m_ourKeys.publicKey));
    broker.push("PING"); // proves both deliveries were read before we look
    QTRY_COMPARE_WITH_TIMEOUT(broker.count("pong"), 1, Patience);
    QCOMPARE(handled.size(), 0);
    QCOMPARE(broker.count("ack "), 0);
    client.setListeningPaused(false);
    QCOMPARE(handled, (QList<QByteArray>{"one", "two"}));
    QTRY_COMPARE_WITH_TIMEOUT(broker.count("ack "), 2, Patience);
}

void tst_Client::requestGetsCorrelatedReply()
{
    FakeBroker broker;
    broker.keys.insert("svc-b", m_peerKeys.publicKey.toBase64());
    Client client(options({&broker}));
    QVERIFY(client.start().ok());
    std::optional<cmq::Result<QByteArray>> reply;
    const auto id = client.request("svc-b", "what time is it?", 10000,
                                   [&](const cmq::Result<QByteArray> &r) { reply = r; });
    QVERIFY2(id.ok(), qPrintable(id.error()));
    QTRY_COMPARE_WITH_TIMEOUT(broker.count("publish "), 1, Patience);
    QVERIFY(broker.count("consume svc-a_queue") == 1); // replies come to our queue
    const auto request =
        crypto::parseEnvelopeJson(FakeBroker::envelopeJson(broker.lines("publish ").first()));
    QCOMPARE(request->extraFields.value("kind").toString(), "request");
    QCOMPARE(request->extraFields.value("reply_to").toString(), "svc-a");
    const QString correlation = request->extraFields.value("correlation_id").toString();
    QCOMPARE(parseMessageId(id.value()).correlationId, correlation);
    QCOMPARE(crypto::open(request->sealed, m_peerKeys).value(), "what time is it?");

    // An unrelated reply is not taken for ours.
    broker.push(deliveryLine("svc-b-other", "not yours", m_ourKeys.publicKey,
                             {{"kind", "reply"}, {"correlation_id", newCorrelationId()}}));
    broker.push(deliveryLine(makeMessageId("svc-b", newCorrelationId(), "svc-a"), "noon",
                             m_ourKeys.publicKey,
                             {{"kind", "reply"}, {"correlation_id", correlation}}));
    QTRY_VERIFY_WITH_TIMEOUT(reply.has_value(), Patience);
    QVERIFY(reply->ok());
    QCOMPARE(reply->value(), "noon");
    QTRY_COMPARE_WITH_TIMEOUT(broker.count("ack "), 2, Patience); // both acked
}

void tst_Client::requestTimesOutAndWithdrawsMessage()
{
    FakeBroker broker; // svc-x never registers a key: the request cannot even be sealed
    Client client(options({&broker}));
    QSignalSpy states(&client, &Client::messageStateChanged);
    QVERIFY(client.start().ok());
    std::optional<cmq::Result<QByteArray>> reply;
    QElapsedTimer timer;
    timer.start();
    const auto id = client.request("svc-x", "anyone?", 600,
                                   [&](const cmq::Result<QByteArray> &r) { reply = r; });
    QVERIFY(id.ok());
    QTRY_VERIFY_WITH_TIMEOUT(reply.has_value(), Patience);
    QVERIFY(timer.elapsed() >= 550);
    QVERIFY(!reply->ok());
    QVERIFY2(reply->error().contains("no reply from svc-x within 600 ms"),
             qPrintable(reply->error()));
    QCOMPARE(states.last().at(0).toString(), id.value());
    QCOMPARE(states.last().at(1).value<MessageState>(), MessageState::Cancelled);
    QCOMPARE(client.pendingCount(), 0);
    QCOMPARE(broker.count("publish "), 0);
}

void tst_Client::handlerAnswersRequest()
{
    FakeBroker broker;
    broker.keys.insert("svc-b", m_peerKeys.publicKey.toBase64());
    Client client(options({&broker}));
    QVERIFY(client
                .listen([](const IncomingMessage &m) -> std::optional<QByteArray> {
                    if (m.kind != MessageKind::Request)
                        return std::nullopt;
                    return "re: " + m.payload;
                })
                .ok());
    QSignalSpy subscribed(&client, &Client::subscribed);
    QSignalSpy drained(&client, &Client::outboxDrained);
    QVERIFY(client.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);
    const QString correlation = newCorrelationId();
    const QString requestId = makeMessageId("svc-b", correlation, "svc-a");
    broker.push(deliveryLine(
        requestId, "question", m_ourKeys.publicKey,
        {{"kind", "request"}, {"correlation_id", correlation}, {"reply_to", "svc-b"}}));
    QTRY_COMPARE_WITH_TIMEOUT(drained.size(), 1, Patience);
    QCOMPARE(broker.lines("ack ").value(0), "ack " + requestId.toUtf8());
    const QByteArray publish = broker.lines("publish ").value(0);
    QVERIFY(publish.startsWith("publish CipherMQ_exchange svc-b_key "));
    const auto answer = crypto::parseEnvelopeJson(FakeBroker::envelopeJson(publish));
    QCOMPARE(answer->extraFields.value("kind").toString(), "reply");
    QCOMPARE(answer->extraFields.value("correlation_id").toString(), correlation);
    QCOMPARE(crypto::open(answer->sealed, m_peerKeys).value(), "re: question");
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
