// The Client receiving, against a scripted broker on loopback (fakebroker.h): the topology it
// declares and declares again after a reconnect, deliveries handed to the application once with
// what the broker attests, paused deliveries, and requests with their correlated replies.

#include <QSignalSpy>
#include <QtTest>

#include "client/messageid.h"
#include "fakebroker.h"

using namespace clienttest;

class tst_ClientDelivery : public QObject, public clienttest::ClientFixture
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QVERIFY(prepareKeys()); }
    void listenReplaysTopologyAfterReconnect();
    void redeliveriesReachTheApplicationOnce();
    void deliveryMetaReachesTheApplication();
    void brokerWithoutDeliveryMetaIsUsable();
    void undecryptableMessageIsRejected();
    void pausedDeliveriesAreHeldUnacked();
    void requestGetsCorrelatedReply();
    void requestTimesOutAndWithdrawsMessage();
    void handlerAnswersRequest();
};

void tst_ClientDelivery::listenReplaysTopologyAfterReconnect()
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

void tst_ClientDelivery::redeliveriesReachTheApplicationOnce()
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

void tst_ClientDelivery::deliveryMetaReachesTheApplication()
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

void tst_ClientDelivery::brokerWithoutDeliveryMetaIsUsable()
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

void tst_ClientDelivery::undecryptableMessageIsRejected()
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

void tst_ClientDelivery::pausedDeliveriesAreHeldUnacked()
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

void tst_ClientDelivery::requestGetsCorrelatedReply()
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

void tst_ClientDelivery::requestTimesOutAndWithdrawsMessage()
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

void tst_ClientDelivery::handlerAnswersRequest()
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

QTEST_GUILESS_MAIN(tst_ClientDelivery)
#include "tst_clientdelivery.moc"
