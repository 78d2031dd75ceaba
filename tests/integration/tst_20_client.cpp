// The client library against the real broker: services exchanging encrypted messages by name,
// every message reaching the application exactly once; failover past an unreachable first
// address and after a broker's shutdown notice; request/reply including the timeout.

#include <QSignalSpy>
#include <QTcpServer>
#include <QtTest>

#include "brokerprocess.h"
#include "client/blockingclient.h"
#include "client/client.h"
#include "clienttest.h"

using namespace cmq::client;
using namespace cmq::test;

namespace {
constexpr int Patience = 30000;
}

class tst_ClientLibrary : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void sendAndListenByName();
    void firstBrokerUnreachable_data();
    void firstBrokerUnreachable();
    void shutdownNoticeFailsOver();
    void requestReply();
    void requestTimesOut();

private:
    // svc-a sends `count` messages to svc-b through `senderPorts`; svc-b listens on
    // `receiverPorts`. Checks that each reached svc-b's application once, with its text.
    void exchange(const QList<quint16> &senderPorts, const QList<quint16> &receiverPorts, int count,
                  const QString &tag, int connectTimeoutMs = 5000);

    QTemporaryDir m_dir;
    BrokerProcess m_broker;
    QHash<QString, QString> m_keys; // identity → key pair file
};

void tst_ClientLibrary::initTestCase()
{
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    for (const QString name : {"svc-a", "svc-b", "svc-c"})
        m_keys.insert(name, makeKeyPair(m_dir, name));
}

void tst_ClientLibrary::exchange(const QList<quint16> &senderPorts,
                                 const QList<quint16> &receiverPorts, int count, const QString &tag,
                                 int connectTimeoutMs)
{
    ClientOptions receiverOptions = clientOptions("svc-b", receiverPorts, m_keys.value("svc-b"));
    receiverOptions.connectTimeoutMs = connectTimeoutMs;
    Client receiver(receiverOptions);
    Inbox inbox;
    QVERIFY(receiver.listen(inbox.handler()).ok());
    QSignalSpy subscribed(&receiver, &Client::subscribed);
    QVERIFY(receiver.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);

    ClientOptions senderOptions = clientOptions("svc-a", senderPorts);
    senderOptions.connectTimeoutMs = connectTimeoutMs;
    QHash<QString, MessageState> states;
    Client sender(senderOptions);
    connect(&sender, &Client::messageStateChanged, this,
            [&](const QString &id, MessageState state) { states.insert(id, state); });
    QVERIFY(sender.start().ok());
    QHash<QString, QByteArray> sent;
    for (int i = 0; i < count; ++i) {
        const QByteArray text = tag.toUtf8() + " #" + QByteArray::number(i) + " — chiffré";
        const auto id = sender.send("svc-b", text);
        QVERIFY2(id.ok(), qPrintable(id.error()));
        sent.insert(id.value(), text);
    }
    QTRY_COMPARE_WITH_TIMEOUT(inbox.distinct(), count, Patience);
    QTRY_COMPARE_WITH_TIMEOUT(sender.pendingCount(), 0, Patience);
    QVERIFY2(inbox.repeated().isEmpty(), qPrintable(inbox.repeated().join(", ")));
    QCOMPARE(inbox.payloadById, sent);
    for (auto it = sent.cbegin(); it != sent.cend(); ++it)
        QCOMPARE(states.value(it.key()), MessageState::Delivered);
    // A clean stop: the last acks reach the broker, so the next test's receiver starts empty.
    QSignalSpy stopped(&receiver, &Client::stopped);
    receiver.shutdown();
    QTRY_COMPARE_WITH_TIMEOUT(stopped.size(), 1, Patience);
}

void tst_ClientLibrary::sendAndListenByName()
{
    exchange({m_broker.port()}, {m_broker.port()}, 50, "plain");
}

void tst_ClientLibrary::firstBrokerUnreachable_data()
{
    QTest::addColumn<QString>("kind");
    QTest::newRow("nothing listens") << "closed";
    QTest::newRow("accepts TCP, never speaks TLS") << "silent";
}

void tst_ClientLibrary::firstBrokerUnreachable()
{
    QFETCH(QString, kind);
    QTcpServer silent; // accepts connections into its backlog and never answers
    quint16 first = 0;
    if (kind == "silent") {
        QVERIFY(silent.listen(QHostAddress::LocalHost, 0));
        first = silent.serverPort();
    } else {
        first = freePort();
    }
    QElapsedTimer timer;
    timer.start();
    exchange({first, m_broker.port()}, {first, m_broker.port()}, 20, kind, 1000);
    // The dead address costs at most its connect timeout per client, not a backoff cycle.
    QVERIFY2(timer.elapsed() < 15000, qPrintable(QString::number(timer.elapsed())));
}

void tst_ClientLibrary::shutdownNoticeFailsOver()
{
    // Two brokers; the client sits on the first. A graceful stop of the first sends the notice
    // and the client moves to the second at once, well before its heartbeat would notice.
    BrokerProcess first;
    BrokerProcess second;
    QVERIFY2(first.start(), first.output().constData());
    QVERIFY2(second.start(), second.output().constData());
    ClientOptions options =
        clientOptions("svc-c", {first.port(), second.port()}, m_keys.value("svc-c"));
    options.heartbeatSec = 10; // dead-server detection would take 22 s
    Client client(options);
    Inbox inbox;
    QVERIFY(client.listen(inbox.handler()).ok());
    QSignalSpy connected(&client, &Client::connected);
    QSignalSpy subscribed(&client, &Client::subscribed);
    QVERIFY(client.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);
    QCOMPARE(connected.first().at(0).toString(), QStringLiteral("127.0.0.1:%1").arg(first.port()));

    QElapsedTimer sinceStop;
    sinceStop.start();
    QVERIFY(first.terminate());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 2, Patience);
    QVERIFY2(sinceStop.elapsed() < 8000, qPrintable(QString::number(sinceStop.elapsed())));
    QCOMPARE(connected.last().at(0).toString(), QStringLiteral("127.0.0.1:%1").arg(second.port()));

    // And it works there: topology and subscription were replayed on the second broker.
    BlockingClient sender(clientOptions("svc-a", {second.port()}));
    QVERIFY(sender.connect(Patience).ok());
    QVERIFY(sender.send("svc-c", "after failover", Patience).ok());
    QTRY_COMPARE_WITH_TIMEOUT(inbox.distinct(), 1, Patience);
    QCOMPARE(inbox.payloadById.values().first(), "after failover");
}

void tst_ClientLibrary::requestReply()
{
    Client replier(clientOptions("svc-b", {m_broker.port()}, m_keys.value("svc-b")));
    QVERIFY(replier
                .listen([](const IncomingMessage &m) -> std::optional<QByteArray> {
                    if (m.kind != MessageKind::Request)
                        return std::nullopt;
                    return "answer to " + m.from.toUtf8() + ": " + m.payload.toUpper();
                })
                .ok());
    QSignalSpy subscribed(&replier, &Client::subscribed);
    QVERIFY(replier.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);

    // The blocking form, as a script would use it.
    BlockingClient requester(clientOptions("svc-a", {m_broker.port()}, m_keys.value("svc-a")));
    QVERIFY(requester.connect(Patience).ok());
    const auto reply = requester.request("svc-b", "hello", Patience);
    QVERIFY2(reply.ok(), qPrintable(reply.error()));
    QCOMPARE(reply.value(), "answer to svc-a: HELLO");

    // Several at once on the asynchronous client: each reply finds its own request.
    Client &async = requester.client();
    QHash<int, QByteArray> replies;
    for (int i = 0; i < 10; ++i) {
        const auto id =
            async.request("svc-b", "q" + QByteArray::number(i), Patience,
                          [&replies, i](const cmq::Result<QByteArray> &r) {
                              replies.insert(i, r.ok() ? r.value() : "ERROR " + r.error().toUtf8());
                          });
        QVERIFY(id.ok());
    }
    QTRY_COMPARE_WITH_TIMEOUT(replies.size(), 10, Patience);
    for (int i = 0; i < 10; ++i)
        QCOMPARE(replies.value(i), "answer to svc-a: Q" + QByteArray::number(i));
}

void tst_ClientLibrary::requestTimesOut()
{
    // svc-c is up and takes the request, but never answers: the requester gets a timeout error
    // after its timeout, not before and not much after.
    Client mute(clientOptions("svc-c", {m_broker.port()}, m_keys.value("svc-c")));
    int seen = 0;
    QVERIFY(mute.listen([&seen](const IncomingMessage &) -> std::optional<QByteArray> {
                    ++seen;
                    return std::nullopt;
                })
                .ok());
    QSignalSpy subscribed(&mute, &Client::subscribed);
    QVERIFY(mute.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);

    BlockingClient requester(clientOptions("svc-a", {m_broker.port()}, m_keys.value("svc-a")));
    QVERIFY(requester.connect(Patience).ok());
    QElapsedTimer timer;
    timer.start();
    const auto reply = requester.request("svc-c", "are you there?", 1500);
    const qint64 took = timer.elapsed();
    QVERIFY(!reply.ok());
    QVERIFY2(reply.error().contains("no reply from svc-c within 1500 ms"),
             qPrintable(reply.error()));
    QVERIFY2(took >= 1450 && took < 6000, qPrintable(QString::number(took)));
    QTRY_COMPARE_WITH_TIMEOUT(seen, 1, Patience); // it did arrive; it was just not answered
}

QTEST_GUILESS_MAIN(tst_ClientLibrary)
#include "tst_20_client.moc"
