// End to end as the existing CipherMQ clients do it (shared/spec/compatibility.md): the
// receiver registers its X25519 key, declares and binds its queue and consumes; the sender
// repeats the declare/bind sequence (ignoring the replies), fetches the key and publishes real
// sealed-box envelopes one at a time; the receiver acks without reading the replies. Every
// message must arrive and decrypt.

#include <QtTest>

#include "brokerprocess.h"
#include "crypto/envelopecrypto.h"
#include "crypto/keypair.h"
#include "testclient.h"

using cmq::test::BrokerProcess;
using cmq::test::TestClient;
namespace crypto = cmq::crypto;
using cmq::Result;

class tst_ExistingClients : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void senderToReceiver();
};

void tst_ExistingClients::senderToReceiver()
{
    BrokerProcess broker;
    QVERIFY2(broker.start(), broker.output().constData());

    // Receiver start-up, exactly the original sequence.
    const Result<crypto::KeyPair> keys = crypto::generateKeyPair();
    QVERIFY(keys.ok());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QCOMPARE(receiver.request("register_public_key " + keys->publicKey.toBase64()),
             "Public key registered");
    QCOMPARE(receiver.request("declare_queue receiver_1_queue"), "Queue declared");
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("bind receiver_1_queue CipherMQ_exchange receiver_1_key"),
             "Queue bound");
    QCOMPARE(receiver.request("consume receiver_1_queue"), "Subscribed to queue");

    // Sender start-up: it sends the same topology commands and only logs the (refused) replies.
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    for (const QByteArray &line : {QByteArray("declare_queue receiver_1_queue"),
                                  QByteArray("declare_exchange CipherMQ_exchange"),
                                  QByteArray("bind receiver_1_queue CipherMQ_exchange receiver_1_key")})
        QVERIFY(!sender.request(line).isNull());
    const QByteArray keyLine = sender.request("get_public_key receiver_1");
    QVERIFY2(keyLine.startsWith("Public key: "), keyLine.constData());
    const Result<QByteArray> receiverKey =
        crypto::publicKeyFromBase64(keyLine.mid(int(qstrlen("Public key: "))));
    QVERIFY(receiverKey.ok());

    // 50 messages, one at a time, each waiting for exactly "ACK <id>".
    QHash<QByteArray, QByteArray> sent; // id → plaintext
    for (int i = 0; i < 50; ++i) {
        const QByteArray plaintext = "order " + QByteArray::number(i) + " — données chiffrées";
        const QByteArray id = "sender_1-" + QByteArray::number(1000 + i) + "-receiver_1";
        const Result<crypto::SealedEnvelope> sealed = crypto::seal(plaintext, receiverKey.value());
        QVERIFY(sealed.ok());
        const QByteArray json = crypto::buildEnvelopeJson(QString::fromUtf8(id), "receiver_1",
                                                          sealed.value(),
                                                          QDateTime::currentDateTimeUtc());
        QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_key " + json), "ACK " + id);
        sent.insert(id, plaintext);
    }

    // The receiver reads "Message:" lines only, decrypts, and acks without reading replies.
    QHash<QByteArray, QByteArray> received;
    while (received.size() < sent.size()) {
        const QByteArray line = receiver.readLineStartingWith("Message: ");
        QVERIFY2(!line.isNull(), "a message did not arrive");
        const qsizetype idEnd = line.indexOf(' ', 9);
        const QByteArray id = line.mid(9, idEnd - 9);
        const Result<crypto::ParsedEnvelope> parsed = crypto::parseEnvelopeJson(line.mid(idEnd + 1));
        QVERIFY2(parsed.ok(), qPrintable(parsed.error()));
        QCOMPARE(parsed->messageId.toUtf8(), id);
        const Result<QByteArray> plaintext = crypto::open(parsed->sealed, keys.value());
        QVERIFY2(plaintext.ok(), qPrintable(plaintext.error()));
        received.insert(id, plaintext.value());
        receiver.send("ack " + id);
    }
    QCOMPARE(received, sent);

    // All acked (the broker has answered every ack): a new consumer gets nothing more.
    for (qsizetype i = 0; i < sent.size(); ++i)
        QVERIFY(!receiver.readLineStartingWith("ACK_CONFIRMED ").isNull());
    receiver.disconnect();
    TestClient again("receiver_1");
    QVERIFY(again.connectTo(broker.port()));
    QCOMPARE(again.request("consume receiver_1_queue"), "Subscribed to queue");
    QVERIFY(again.nothingWithin(500));
}

QTEST_GUILESS_MAIN(tst_ExistingClients)
#include "tst_06_existing_clients.moc"
