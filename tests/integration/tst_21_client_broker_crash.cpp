// At-least-once through a broker crash: a sender with the on-disk outbox streams messages while
// the broker is SIGKILLed and started again on the same data. Every message must reach the
// receiving application exactly once (the broker's dedupe answers the resent publishes, the
// receiver's window drops redeliveries of what it already handled), and the outbox must end
// empty.

#include <QSignalSpy>
#include <QtTest>

#include "brokerprocess.h"
#include "client/client.h"
#include "client/fileoutbox.h"
#include "clienttest.h"

using namespace cmq::client;
using namespace cmq::test;

class tst_ClientBrokerCrash : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void brokerKilledMidStream();
};

void tst_ClientBrokerCrash::brokerKilledMidStream()
{
    constexpr int Total = 300;
    constexpr int Patience = 60000;
    QTemporaryDir dir;
    BrokerProcess broker;
    QVERIFY2(broker.start(), broker.output().constData());

    Client receiver(clientOptions("svc-b", {broker.port()}, makeKeyPair(dir, "svc-b")));
    Inbox inbox;
    QVERIFY(receiver.listen(inbox.handler()).ok());
    QSignalSpy subscribed(&receiver, &Client::subscribed);
    QVERIFY(receiver.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(subscribed.size(), 1, Patience);

    auto outbox = FileOutbox::open(dir.filePath("outbox"));
    QVERIFY2(outbox.ok(), qPrintable(outbox.error()));
    ClientOptions senderOptions = clientOptions("svc-a", {broker.port()});
    senderOptions.publishWindow = 8; // a stream, not one burst the broker swallows at once
    Client sender(senderOptions, std::move(outbox).value());
    QSignalSpy senderConnected(&sender, &Client::connected);
    QVERIFY(sender.start().ok());
    QHash<QString, QByteArray> sent;
    for (int i = 0; i < Total; ++i) {
        const QByteArray text = "crash-stream " + QByteArray::number(i);
        const auto id = sender.send("svc-b", text);
        QVERIFY(id.ok());
        sent.insert(id.value(), text);
    }

    // Mid-stream: some delivered, most still in the outbox.
    QTRY_VERIFY_WITH_TIMEOUT(inbox.distinct() >= 30, Patience);
    broker.kill();
    const int pendingAtCrash = sender.pendingCount();
    const int receivedAtCrash = inbox.distinct();
    QVERIFY2(pendingAtCrash > 0, "the stream finished before the crash: the test proves nothing");
    QVERIFY(receivedAtCrash < Total);
    QCOMPARE(QDir(dir.filePath("outbox")).entryList({"*.msg"}, QDir::Files).size(), pendingAtCrash);

    QVERIFY2(broker.start(), broker.output().constData());
    QTRY_COMPARE_WITH_TIMEOUT(inbox.distinct(), Total, Patience);
    QTRY_COMPARE_WITH_TIMEOUT(sender.pendingCount(), 0, Patience);
    QVERIFY(senderConnected.size() >= 2);                       // it did reconnect
    QTRY_VERIFY_WITH_TIMEOUT(subscribed.size() >= 2, Patience); // re-subscribed
    QVERIFY2(inbox.repeated().isEmpty(), qPrintable(inbox.repeated().join(", ")));
    QCOMPARE(inbox.payloadById, sent);
    QCOMPARE(QDir(dir.filePath("outbox")).entryList({"*.msg"}, QDir::Files).size(), 0);
    qInfo("at the crash: %d received, %d in the outbox; redeliveries dropped by the receiver: %d",
          receivedAtCrash, pendingAtCrash, receiver.duplicatesDropped());
}

QTEST_GUILESS_MAIN(tst_ClientBrokerCrash)
#include "tst_21_client_broker_crash.moc"
