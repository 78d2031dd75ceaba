// The client library's use of delivery metadata and presence against the real broker: messages
// carry the attested sender whatever the envelope claims; a reply forged by a third identity
// is refused and the real one still accepted; a replier answers the attested sender, not the
// request's reply_to; presence comes as a signal and is subscribed again after a failover.

#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QtTest>

#include "brokerprocess.h"
#include "client/blockingclient.h"
#include "client/client.h"
#include "client/messageid.h"
#include "clienttest.h"
#include "crypto/keypair.h"
#include "testclient.h"

using namespace cmq::client;
using namespace cmq::test;

namespace {
constexpr int Patience = 30000;
}

class tst_ClientMeta : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void attestedSenderReachesTheApplication();
    void forgedReplyIsRefused();
    void replyGoesToTheAttestedSender();
    void presenceSignalSurvivesFailover();

private:
    // A started client of `identity` that listens with `handler`, once subscribed.
    std::unique_ptr<Client> listening(const QString &identity, const QList<quint16> &ports,
                                      Client::Handler handler);

    QTemporaryDir m_dir;
    BrokerProcess m_broker;
    QHash<QString, QString> m_keys; // identity → key pair file
};

void tst_ClientMeta::initTestCase()
{
    m_broker.set("acl.presence_groups", R"([["svc-a", "svc-b", "svc-c"]])");
    m_broker.set("acl.presence_debounce_ms", "200");
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    for (const QString name : {"svc-a", "svc-b", "svc-c"})
        m_keys.insert(name, makeKeyPair(m_dir, name));
}

std::unique_ptr<Client> tst_ClientMeta::listening(const QString &identity,
                                                  const QList<quint16> &ports,
                                                  Client::Handler handler)
{
    auto client = std::make_unique<Client>(clientOptions(identity, ports, m_keys.value(identity)));
    QSignalSpy subscribed(client.get(), &Client::subscribed);
    if (!client->listen(std::move(handler)).ok() || !client->start().ok())
        return {};
    if (!subscribed.wait(Patience) && subscribed.isEmpty())
        return {};
    return client;
}

void tst_ClientMeta::attestedSenderReachesTheApplication()
{
    QList<IncomingMessage> received;
    auto receiver = listening("svc-b", {m_broker.port()},
                              [&](const IncomingMessage &m) -> std::optional<QByteArray> {
                                  received.append(m);
                                  return std::nullopt;
                              });
    QVERIFY(receiver);
    // svc-c claims to be svc-a in the id and in reply_to.
    BlockingClient forger(clientOptions("svc-c", {m_broker.port()}));
    QVERIFY(forger.connect(Patience).ok());
    SendOptions claim;
    claim.messageId = makeMessageId("svc-a", newCorrelationId(), "svc-b");
    claim.extraFields = QJsonObject{{"reply_to", "svc-a"}, {"sender", "svc-a"}};
    const QDateTime before = QDateTime::currentDateTimeUtc().addMSecs(-1);
    QVERIFY(forger.send("svc-b", "who am I?", Patience, claim).ok());
    const QDateTime after = QDateTime::currentDateTimeUtc().addMSecs(1);
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), 1, Patience);
    const IncomingMessage &m = received.first();
    QCOMPARE(m.payload, "who am I?");
    QCOMPARE(m.from, "svc-a"); // what the envelope claims
    QCOMPARE(m.sender(), "svc-c");
    QVERIFY(m.isAttested());
    QVERIFY2(m.publishedAt() >= before && m.publishedAt() <= after,
             qPrintable(m.publishedAt().toString(Qt::ISODateWithMs)));
    QVERIFY(!m.redelivered());
    QCOMPARE(m.deliveryCount(), 1);
    QVERIFY(m.deadLetterReason().isEmpty());
}

void tst_ClientMeta::forgedReplyIsRefused()
{
    // svc-b takes requests and does not answer by itself; the test answers for it.
    QList<IncomingMessage> requests;
    auto service = listening("svc-b", {m_broker.port()},
                             [&](const IncomingMessage &m) -> std::optional<QByteArray> {
                                 if (m.kind == MessageKind::Request)
                                     requests.append(m);
                                 return std::nullopt;
                             });
    QVERIFY(service);
    BlockingClient requester(clientOptions("svc-a", {m_broker.port()}, m_keys.value("svc-a")));
    QVERIFY(requester.connect(Patience).ok());
    QSignalSpy errors(&requester.client(), &Client::errorOccurred);
    std::optional<cmq::Result<QByteArray>> reply;
    QVERIFY(requester.client()
                .request("svc-b", "balance?", Patience,
                         [&](const cmq::Result<QByteArray> &r) { reply = r; })
                .ok());
    QTRY_COMPARE_WITH_TIMEOUT(requests.size(), 1, Patience);
    QCOMPARE(requests.first().sender(), "svc-a");
    const QString correlation = requests.first().correlationId;
    QVERIFY(!correlation.isEmpty());

    // svc-c learns the correlation id and answers first, posing as svc-b in every field.
    const auto replyOptions = [&](const QString &claimedSender) {
        SendOptions options;
        options.messageId = makeMessageId(claimedSender, newCorrelationId(), "svc-a");
        options.extraFields = QJsonObject{
            {"kind", "reply"}, {"correlation_id", correlation}, {"reply_to", claimedSender}};
        return options;
    };
    BlockingClient forger(clientOptions("svc-c", {m_broker.port()}));
    QVERIFY(forger.connect(Patience).ok());
    QVERIFY(forger.send("svc-a", "pay svc-c", Patience, replyOptions("svc-b")).ok());
    QTRY_VERIFY_WITH_TIMEOUT(!errors.isEmpty(), Patience);
    QVERIFY2(errors.first().at(0).toString().contains("refused reply"),
             qPrintable(errors.first().at(0).toString()));
    QVERIFY2(errors.first().at(0).toString().contains("svc-c"),
             qPrintable(errors.first().at(0).toString()));
    QVERIFY(!reply.has_value()); // still waiting for the real one

    // The service's own answer is taken.
    QVERIFY(service->send("svc-a", "42", replyOptions("svc-b")).ok());
    QTRY_VERIFY_WITH_TIMEOUT(reply.has_value(), Patience);
    QVERIFY2(reply->ok(), qPrintable(reply->error()));
    QCOMPARE(reply->value(), "42");
}

void tst_ClientMeta::replyGoesToTheAttestedSender()
{
    // svc-c sends svc-b a request that names svc-a as the one to reply to: the answer goes to
    // svc-c, who sent it, not to svc-a.
    auto service = listening("svc-b", {m_broker.port()},
                             [](const IncomingMessage &m) -> std::optional<QByteArray> {
                                 if (m.kind != MessageKind::Request)
                                     return std::nullopt;
                                 return "answer for " + m.sender().toUtf8();
                             });
    QVERIFY(service);
    BlockingClient forger(clientOptions("svc-c", {m_broker.port()}));
    QVERIFY(forger.connect(Patience).ok());
    QVERIFY(forger.declareQueue("svc-c_replies", Patience).ok());
    QVERIFY(forger.declareExchange("CipherMQ_exchange", Patience).ok());
    QVERIFY(forger.bindQueue("svc-c_replies", "CipherMQ_exchange", "svc-c_key", Patience).ok());
    // svc-c's key, so that svc-b can seal the reply for it.
    TestClient reader("svc-c");
    QVERIFY(reader.connectTo(m_broker.port()));
    const auto svcCKeys = cmq::crypto::loadKeyPair(m_keys.value("svc-c"));
    QVERIFY(svcCKeys.ok());
    QCOMPARE(reader.request("register_public_key " + svcCKeys->publicKey.toBase64()),
             "Public key registered");
    TestClient svcA("svc-a");
    QVERIFY(svcA.connectTo(m_broker.port()));
    QCOMPARE(svcA.request("declare_queue svc-a_redirect"), "Queue declared");
    QCOMPARE(svcA.request("bind svc-a_redirect CipherMQ_exchange svc-a_key"), "Queue bound");

    const QString correlation = newCorrelationId();
    SendOptions options;
    options.messageId = makeMessageId("svc-a", correlation, "svc-b");
    options.extraFields =
        QJsonObject{{"kind", "request"}, {"correlation_id", correlation}, {"reply_to", "svc-a"}};
    QVERIFY(forger.send("svc-b", "redirect me", Patience, options).ok());

    QByteArray meta;
    // Polled: the reply is published by svc-b's client, which runs while the test waits.
    QDeadlineTimer deadline(Patience);
    do {
        QTest::qWait(100);
        meta = reader.request("fetch svc-c_replies with-meta");
    } while (!meta.startsWith("Meta: ") && !deadline.hasExpired());
    QVERIFY2(meta.startsWith("Meta: "), meta.constData());
    const QByteArray message = reader.readLine();
    QVERIFY2(message.startsWith("Message: "), message.constData());
    const QJsonObject facts = QJsonDocument::fromJson(meta.mid(meta.indexOf('{'))).object();
    QCOMPARE(facts.value("sender").toString(), "svc-b");
    const QJsonObject envelope =
        QJsonDocument::fromJson(message.mid(message.indexOf('{'))).object();
    QCOMPARE(envelope.value("kind").toString(), "reply");
    QCOMPARE(envelope.value("correlation_id").toString(), correlation);
    QCOMPARE(svcA.request("fetch svc-a_redirect"), "No messages");
}

void tst_ClientMeta::presenceSignalSurvivesFailover()
{
    // svc-a watches presence on the first of two brokers; svc-b is on the first, svc-c on the
    // second. After the first stops, svc-a is on the second and told who is online there.
    BrokerProcess first;
    BrokerProcess second;
    for (BrokerProcess *broker : {&first, &second}) {
        broker->set("acl.presence_groups", R"([["svc-a", "svc-b", "svc-c"]])");
        broker->set("acl.presence_debounce_ms", "200");
        QVERIFY2(broker->start(), broker->output().constData());
    }
    BlockingClient onFirst(clientOptions("svc-b", {first.port()}));
    QVERIFY(onFirst.connect(Patience).ok());
    BlockingClient onSecond(clientOptions("svc-c", {second.port()}));
    QVERIFY(onSecond.connect(Patience).ok());

    ClientOptions options = clientOptions("svc-a", {first.port(), second.port()});
    Client watcher(options);
    QList<std::pair<QString, bool>> seen;
    connect(&watcher, &Client::presenceChanged, this, [&](const QString &cn, bool online) {
        seen.append({cn, online});
    });
    QSignalSpy connected(&watcher, &Client::connected);
    watcher.watchPresence();
    QVERIFY(watcher.isWatchingPresence());
    QVERIFY(watcher.start().ok());
    QTRY_VERIFY_WITH_TIMEOUT(seen.contains(std::pair{QStringLiteral("svc-b"), true}), Patience);
    QVERIFY(!seen.contains(std::pair{QStringLiteral("svc-c"), true}));

    // Changes while connected.
    {
        BlockingClient visitor(clientOptions("svc-c", {first.port()}));
        QVERIFY(visitor.connect(Patience).ok());
        QTRY_VERIFY_WITH_TIMEOUT(seen.contains(std::pair{QStringLiteral("svc-c"), true}), Patience);
        visitor.close(Patience);
    }
    QTRY_VERIFY_WITH_TIMEOUT(seen.contains(std::pair{QStringLiteral("svc-c"), false}), Patience);

    seen.clear();
    QVERIFY(first.terminate());
    QTRY_COMPARE_WITH_TIMEOUT(connected.size(), 2, Patience);
    QCOMPARE(connected.last().at(0).toString(), QStringLiteral("127.0.0.1:%1").arg(second.port()));
    QTRY_VERIFY_WITH_TIMEOUT(seen.contains(std::pair{QStringLiteral("svc-c"), true}), Patience);

    // Stopped, it is not asked for again after the next reconnect.
    watcher.watchPresence(false);
    QVERIFY(!watcher.isWatchingPresence());
}

QTEST_GUILESS_MAIN(tst_ClientMeta)
#include "tst_49_client_meta.moc"
