// Delivery metadata against the real broker on both storage drivers: a consumer that asks for it
// (consume/fetch ... with-meta) gets a "Meta:" line before each delivery with the publisher's
// verified CN (never what the envelope claims), the publish time, the redelivered flag and the
// delivery count; the sender and publish time come back from storage after a restart, the count
// goes up with each nack and survives kill -9 as "delivered before"; consumers that did not ask
// see the old lines byte for byte.

#include <memory>
#include <vector>

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "brokerdatabase.h"
#include "brokerprocess.h"
#include "testclient.h"
#include "testpostgres.h"

using namespace cmq::test;

namespace {

// An envelope that lies about who sent it, in every field a reader might take for the sender.
QByteArray forgedEnvelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=",)"
           R"("ciphertext":"Y2lwaGVy","sender":"receiver_2","sender_client_id":"receiver_2",)"
           R"("reply_to":"receiver_2","client_id":"receiver_2"})";
}

// A forged id too: the naming convention says "{sender}-{uuid}-{receiver}".
const QByteArray ForgedId = "receiver_2-0b7d-receiver_1";

void addDrivers()
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("sqlite") << "sqlite";
    QTest::newRow("postgresql") << "postgresql";
}

struct MetaLine
{
    QByteArray id;
    QJsonObject facts;
};

// "Meta: <id> <json>"; an empty id when the line is something else.
MetaLine readMeta(const QByteArray &line)
{
    if (!line.startsWith("Meta: "))
        return {};
    const QByteArray rest = line.mid(6);
    const qsizetype space = rest.indexOf(' ');
    return {rest.left(space), QJsonDocument::fromJson(rest.mid(space + 1)).object()};
}

} // namespace

class tst_DeliveryMeta : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup() { m_databases.clear(); }
    void attestedSender_data() { addDrivers(); }
    void attestedSender();
    void countAfterNackAndKill_data() { addDrivers(); }
    void countAfterNackAndKill();
    void plainConsumersUnchanged();

private:
    void configure(BrokerProcess &broker, const QString &driver);
    TestDatabase *postgres() { return m_databases.empty() ? nullptr : m_databases.back().get(); }
    static void declare(TestClient &receiver, const QByteArray &queue);
    // Reads the Meta and Message lines of one delivery; the Message line must carry `envelope`.
    static QJsonObject readDelivery(TestClient &client, const QByteArray &id,
                                    const QByteArray &envelope);

    PostgresServer m_fixture;
    std::vector<std::unique_ptr<TestDatabase>> m_databases;
};

void tst_DeliveryMeta::initTestCase()
{
    QString error;
    m_fixture = fixturePostgres(&error);
    QVERIFY2(m_fixture.isValid(), qPrintable(error));
}

void tst_DeliveryMeta::configure(BrokerProcess &broker, const QString &driver)
{
    if (driver == QLatin1String("postgresql")) {
        const auto &db = m_databases.emplace_back(std::make_unique<TestDatabase>(m_fixture));
        QVERIFY2(db->isValid(), qPrintable(db->error()));
        broker.usePostgres(*db);
    }
}

void tst_DeliveryMeta::declare(TestClient &receiver, const QByteArray &queue)
{
    QCOMPARE(receiver.request("declare_queue " + queue), "Queue declared");
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("bind " + queue + " CipherMQ_exchange " + queue), "Queue bound");
}

QJsonObject tst_DeliveryMeta::readDelivery(TestClient &client, const QByteArray &id,
                                           const QByteArray &envelope)
{
    const MetaLine meta = readMeta(client.readLine());
    if (meta.id != id) {
        qWarning("expected the Meta line of %s", id.constData());
        return {};
    }
    const QByteArray message = client.readLine();
    if (message != "Message: " + id + ' ' + envelope) {
        qWarning("not the delivery of %s: %s", id.constData(), message.left(200).constData());
        return {};
    }
    return meta.facts;
}

void tst_DeliveryMeta::attestedSender()
{
    QFETCH(QString, driver);
    BrokerProcess broker;
    configure(broker, driver);
    QVERIFY2(broker.start(), broker.output().constData());
    const QByteArray envelope = forgedEnvelope(ForgedId);
    QString publishedAt;
    {
        TestClient receiver("receiver_1");
        QVERIFY(receiver.connectTo(broker.port()));
        declare(receiver, "receiver_1_meta");
        QCOMPARE(receiver.request("consume receiver_1_meta with-meta"), "Subscribed to queue");

        TestClient sender("sender_1");
        QVERIFY(sender.connectTo(broker.port()));
        const QDateTime before = QDateTime::currentDateTimeUtc().addMSecs(-1);
        QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_meta " + envelope),
                 "ACK " + ForgedId);
        const QDateTime after = QDateTime::currentDateTimeUtc().addMSecs(1);

        // The broker's record of the publishing connection, whatever the envelope says.
        const QJsonObject facts = readDelivery(receiver, ForgedId, envelope);
        QCOMPARE(facts.value("sender").toString(), QStringLiteral("sender_1"));
        QCOMPARE(facts.value("redelivered").toBool(true), false);
        QCOMPARE(facts.value("delivery_count").toInt(), 1);
        QVERIFY(!facts.contains("dead_letter_reason"));
        publishedAt = facts.value("published_at").toString();
        const QDateTime published = QDateTime::fromString(publishedAt, Qt::ISODateWithMs);
        QVERIFY2(published >= before && published <= after, qPrintable(publishedAt));
        // Left unacknowledged: it comes back after the restart.
    }

    // The sender and the publish time are the stored ones after a restart.
    QVERIFY(broker.terminate());
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QCOMPARE(receiver.request("consume receiver_1_meta with-meta"), "Subscribed to queue");
    const QJsonObject facts = readDelivery(receiver, ForgedId, envelope);
    QCOMPARE(facts.value("sender").toString(), QStringLiteral("sender_1"));
    QCOMPARE(facts.value("published_at").toString(), publishedAt);
    QCOMPARE(facts.value("redelivered").toBool(), true);
    QCOMPARE(facts.value("delivery_count").toInt(), 2);
    QCOMPARE(receiver.request("ack " + ForgedId), "ACK_CONFIRMED " + ForgedId);

    // Stored as the publishing connection's CN.
    BrokerDatabase db(broker, postgres());
    QVERIFY2(db.isOpen(), qPrintable(db.error()));
    QCOMPARE(db.number(QStringLiteral("SELECT COUNT(*) FROM message_metadata WHERE message_id = "
                                      "'%1' AND client_id = 'sender_1'")
                           .arg(QString::fromUtf8(ForgedId))),
             1);
    QVERIFY(broker.terminate());
}

void tst_DeliveryMeta::countAfterNackAndKill()
{
    QFETCH(QString, driver);
    BrokerProcess broker;
    configure(broker, driver);
    QVERIFY2(broker.start(), broker.output().constData());
    const QByteArray envelope = forgedEnvelope("nk-1");
    {
        TestClient receiver("receiver_1");
        QVERIFY(receiver.connectTo(broker.port()));
        declare(receiver, "receiver_1_count");
        TestClient sender("sender_1");
        QVERIFY(sender.connectTo(broker.port()));
        QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_count " + envelope),
                 "ACK nk-1");

        for (int count = 1; count <= 3; ++count) {
            receiver.send("fetch receiver_1_count with-meta");
            const QJsonObject facts = readDelivery(receiver, "nk-1", envelope);
            QCOMPARE(facts.value("delivery_count").toInt(), count);
            QCOMPARE(facts.value("redelivered").toBool(), count > 1);
            QCOMPARE(facts.value("sender").toString(), QStringLiteral("sender_1"));
            if (count < 3)
                QCOMPARE(receiver.request("nack nk-1 requeue"), "NACK_CONFIRMED nk-1");
        }
        // Delivery state is written behind the deliveries: kill only once it is stored.
        BrokerDatabase db(broker, postgres());
        QVERIFY2(db.isOpen(), qPrintable(db.error()));
        QTRY_COMPARE_WITH_TIMEOUT(
            db.number("SELECT COUNT(*) FROM queue_entries WHERE message_id = 'nk-1' AND delivered"),
            qint64(1), 30000);
        broker.kill();
    }
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    // The database keeps that it was delivered, not how often (docs/PROTOCOL.md): it counts as
    // delivered once before.
    receiver.send("fetch receiver_1_count with-meta");
    const QJsonObject facts = readDelivery(receiver, "nk-1", envelope);
    QCOMPARE(facts.value("sender").toString(), QStringLiteral("sender_1"));
    QCOMPARE(facts.value("redelivered").toBool(), true);
    QCOMPARE(facts.value("delivery_count").toInt(), 2);
    QCOMPARE(receiver.request("ack nk-1"), "ACK_CONFIRMED nk-1");
    QVERIFY(broker.terminate());
}

void tst_DeliveryMeta::plainConsumersUnchanged()
{
    // A consumer that did not ask sees exactly the old lines, even beside one that did.
    BrokerProcess broker;
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient plain("receiver_1");
    QVERIFY(plain.connectTo(broker.port()));
    declare(plain, "receiver_1_plain");
    TestClient withMeta("receiver_2");
    QVERIFY(withMeta.connectTo(broker.port()));
    declare(withMeta, "receiver_2_meta");
    QCOMPARE(withMeta.request("consume receiver_2_meta with-meta"), "Subscribed to queue");
    QCOMPARE(plain.request("consume receiver_1_plain"), "Subscribed to queue");

    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    const QByteArray envelope = forgedEnvelope("pl-1");
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_plain " + envelope), "ACK pl-1");
    QCOMPARE(plain.readLine(), "Message: pl-1 " + envelope);
    QCOMPARE(plain.request("nack pl-1 requeue"), "NACK_CONFIRMED pl-1");
    QCOMPARE(plain.readLines(2),
             (QList<QByteArray>{"Redelivered: pl-1", "Message: pl-1 " + envelope}));
    // Asking again for the same queue switches the form of the deliveries that follow.
    QCOMPARE(plain.request("consume receiver_1_plain with-meta"), "Subscribed to queue");
    QCOMPARE(plain.request("nack pl-1 requeue"), "NACK_CONFIRMED pl-1");
    QCOMPARE(readDelivery(plain, "pl-1", envelope).value("delivery_count").toInt(), 3);
    QCOMPARE(plain.request("ack pl-1"), "ACK_CONFIRMED pl-1");

    const QByteArray other = forgedEnvelope("pl-2");
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_2_meta " + other), "ACK pl-2");
    QCOMPARE(readDelivery(withMeta, "pl-2", other).value("sender").toString(),
             QStringLiteral("sender_1"));
    QCOMPARE(withMeta.request("ack pl-2"), "ACK_CONFIRMED pl-2");

    // fetch: the old form unless asked.
    declare(plain, "receiver_1_fetch");
    const QByteArray third = forgedEnvelope("pl-3");
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_fetch " + third), "ACK pl-3");
    QCOMPARE(plain.request("fetch receiver_1_fetch"), "Message: pl-3 " + third);
    QCOMPARE(plain.request("nack pl-3 requeue"), "NACK_CONFIRMED pl-3");
    plain.send("fetch receiver_1_fetch");
    QCOMPARE(plain.readLines(2),
             (QList<QByteArray>{"Redelivered: pl-3", "Message: pl-3 " + third}));
    QCOMPARE(plain.request("nack pl-3 requeue"), "NACK_CONFIRMED pl-3");
    plain.send("fetch receiver_1_fetch with-meta");
    const QJsonObject facts = readDelivery(plain, "pl-3", third);
    QCOMPARE(facts.value("delivery_count").toInt(), 3);
    QCOMPARE(facts.value("redelivered").toBool(), true);
    QCOMPARE(plain.request("ack pl-3"), "ACK_CONFIRMED pl-3");
    QCOMPARE(plain.request("fetch receiver_1_fetch with-meta"), "No messages");
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_DeliveryMeta)
#include "tst_48_delivery_meta.moc"
