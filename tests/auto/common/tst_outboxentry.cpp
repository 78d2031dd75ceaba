// Outbox entries as the on-disk outbox stores them: sealed or still plaintext, with every field
// surviving the round trip, and damaged files recognised as such.

#include <QTest>

#include "client/outboxentry.h"

using cmq::client::OutboxEntry;

class tst_OutboxEntry : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data();
    void roundTrip();
    void rejects_data();
    void rejects();
};

static OutboxEntry sample(bool sealed)
{
    OutboxEntry entry;
    entry.messageId = QStringLiteral("svc-a-0b6e5a4c-1f2d-4e3a-9b8c-7d6e5f4a3b2c-svc-b");
    entry.receiver = QStringLiteral("svc-b");
    entry.exchange = QStringLiteral("CipherMQ_exchange");
    entry.routingKey = QStringLiteral("svc-b_key");
    if (sealed)
        entry.envelope = R"({"message_id":"x","ciphertext":"YWJj","note":"é"})";
    else
        entry.payload = QByteArray("binary\0payload\xff", 15);
    entry.extraFields = QJsonObject{{QStringLiteral("kind"), QStringLiteral("request")}};
    entry.createdAt =
        QDateTime::fromString(QStringLiteral("2026-01-02T03:04:05.678Z"), Qt::ISODateWithMs);
    entry.sequence = 9007199254740993LL; // beyond what a JSON double holds exactly
    return entry;
}

void tst_OutboxEntry::roundTrip_data()
{
    QTest::addColumn<bool>("sealed");
    QTest::newRow("sealed") << true;
    QTest::newRow("plaintext until sealed") << false;
}

void tst_OutboxEntry::roundTrip()
{
    QFETCH(bool, sealed);
    const OutboxEntry entry = sample(sealed);
    const auto back = OutboxEntry::fromJson(entry.toJson());
    QVERIFY2(back.ok(), qPrintable(back.error()));
    QCOMPARE(back->messageId, entry.messageId);
    QCOMPARE(back->receiver, entry.receiver);
    QCOMPARE(back->exchange, entry.exchange);
    QCOMPARE(back->routingKey, entry.routingKey);
    QCOMPARE(back->envelope, entry.envelope);
    QCOMPARE(back->payload, entry.payload);
    QCOMPARE(back->extraFields, entry.extraFields);
    QCOMPARE(back->createdAt, entry.createdAt);
    QCOMPARE(back->sequence, entry.sequence);
    QCOMPARE(back->isSealed(), sealed);
    QVERIFY(!entry.toJson().contains('\n'));
}

void tst_OutboxEntry::rejects_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::newRow("empty file") << QByteArray();
    QTest::newRow("truncated") << sample(true).toJson().chopped(5);
    QTest::newRow("array") << QByteArray("[]");
    QTest::newRow("no id") << QByteArray(
        R"({"exchange":"e","routing_key":"k","sequence":"1","envelope":"{}"})");
    QTest::newRow("bad sequence") << QByteArray(
        R"({"message_id":"m","exchange":"e","routing_key":"k","sequence":"x","envelope":"{}"})");
    QTest::newRow("no payload") << QByteArray(
        R"({"message_id":"m","receiver":"r","exchange":"e","routing_key":"k","sequence":"1"})");
    QTest::newRow("bad payload") << QByteArray(
        R"({"message_id":"m","receiver":"r","exchange":"e","routing_key":"k","sequence":"1","payload_b64":"!!"})");
    QTest::newRow("unsealed without receiver") << QByteArray(
        R"({"message_id":"m","exchange":"e","routing_key":"k","sequence":"1","payload_b64":"YQ=="})");
}

void tst_OutboxEntry::rejects()
{
    QFETCH(QByteArray, json);
    QVERIFY(!OutboxEntry::fromJson(json).ok());
}

QTEST_GUILESS_MAIN(tst_OutboxEntry)
#include "tst_outboxentry.moc"
