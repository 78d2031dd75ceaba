// Memory bounded by configuration, never by what clients send: the byte limit of each queue
// (performance.max_queue_bytes, under the queue's overflow policy) and the broker-wide memory
// budget (performance.memory_budget_mb) whose alarm refuses publishes, shows in the admin
// snapshot and the metrics, and goes off once consumers have drained the broker.

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"

using cmq::test::BrokerProcess;
using cmq::test::freePort;
using cmq::test::TestClient;

// An envelope whose ciphertext is `size` bytes of base64.
static QByteArray envelope(const QByteArray &id, qsizetype size = 8)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=",)" +
           R"("ciphertext":")" + QByteArray(size, 'A') + R"("})";
}

class tst_Memory : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void queueByteLimitDropsHead();
    void queueByteLimitRejectsPublish();
    void memoryAlarm();

private:
    static void declare(TestClient &receiver, const QByteArray &queue);
    static QJsonObject memorySection(TestClient &admin);
};

void tst_Memory::declare(TestClient &receiver, const QByteArray &queue)
{
    QCOMPARE(receiver.request("declare_queue " + queue), "Queue declared");
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("bind " + queue + " CipherMQ_exchange " + queue), "Queue bound");
}

QJsonObject tst_Memory::memorySection(TestClient &admin)
{
    return QJsonDocument::fromJson(admin.request("json")).object().value("memory").toObject();
}

void tst_Memory::queueByteLimitDropsHead()
{
    // Room for three 1 KB envelopes by bytes, far more by count: bytes decide.
    const qsizetype size = envelope("d-1", 1000).size();
    BrokerProcess broker;
    broker.set("performance.max_queue_bytes", QString::number(3 * size + 10));
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    declare(receiver, "receiver_1_bytes");
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    for (const QByteArray id : {"d-1", "d-2", "d-3", "d-4", "d-5"})
        QCOMPARE(
            sender.request("publish CipherMQ_exchange receiver_1_bytes " + envelope(id, 1000)),
            "ACK " + id);
    // A message larger than the whole limit is refused, not stored after evicting everything.
    const QByteArray big = envelope("d-big", 4 * size);
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_bytes " + big),
             "Error: Message d-big of " + QByteArray::number(big.size()) +
                 " bytes exceeds queue 'receiver_1_bytes' byte limit (" +
                 QByteArray::number(3 * size + 10) + " bytes, performance.max_queue_bytes)");
    // d-1 and d-2 were evicted to make room.
    for (const QByteArray id : {"d-3", "d-4", "d-5"}) {
        QCOMPARE(receiver.request("fetch receiver_1_bytes"),
                 "Message: " + id + " " + envelope(id, 1000));
        QCOMPARE(receiver.request("ack " + id), "ACK_CONFIRMED " + id);
    }
    QCOMPARE(receiver.request("fetch receiver_1_bytes"), "No messages");
    QVERIFY(broker.terminate());
}

void tst_Memory::queueByteLimitRejectsPublish()
{
    const qsizetype size = envelope("r-1", 1000).size();
    BrokerProcess broker;
    broker.set("performance.max_queue_bytes", QString::number(3 * size + 10));
    broker.set("performance.overflow_policy", "\"reject-publish\"");
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    declare(receiver, "receiver_1_strict");
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    const auto publish = [&](const QByteArray &id) {
        return sender.request("publish CipherMQ_exchange receiver_1_strict " + envelope(id, 1000));
    };
    for (const QByteArray id : {"r-1", "r-2", "r-3"})
        QCOMPARE(publish(id), "ACK " + id);
    QCOMPARE(publish("r-4"), "Error: Queue 'receiver_1_strict' is full (" +
                                 QByteArray::number(3 * size + 10) +
                                 " bytes, overflow reject-publish): message r-4 rejected");
    // An acknowledged delivery frees its bytes; an unacknowledged one still holds them.
    QCOMPARE(receiver.request("fetch receiver_1_strict"), "Message: r-1 " + envelope("r-1", 1000));
    QVERIFY(publish("r-4").startsWith("Error: Queue 'receiver_1_strict' is full"));
    QCOMPARE(receiver.request("ack r-1"), "ACK_CONFIRMED r-1");
    QCOMPARE(publish("r-4"), "ACK r-4");
    QVERIFY(broker.terminate());
}

void tst_Memory::memoryAlarm()
{
    // A 4 MiB budget and 1 MB messages: four fit (95% of the budget, above the 90% at which
    // the alarm goes off again), the fifth raises the alarm.
    constexpr qsizetype kSize = 1000 * 1000;
    const quint16 adminPort = freePort();
    BrokerProcess broker;
    broker.set("performance.memory_budget_mb", "4");
    broker.set("admin.enabled", "true");
    broker.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(adminPort));
    broker.set("admin.allowed_cns", R"(["ops-admin"])");
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient admin("ops-admin");
    QVERIFY(admin.connectTo(adminPort));
    QCOMPARE(memorySection(admin).value("budget_bytes").toInteger(), 4 << 20);
    QCOMPARE(memorySection(admin).value("alarm").toBool(), false);

    auto receiver = std::make_unique<TestClient>("receiver_1");
    QVERIFY(receiver->connectTo(broker.port()));
    declare(*receiver, "receiver_1_big");
    declare(*receiver, "receiver_1_small");
    auto sender = std::make_unique<TestClient>("sender_1");
    QVERIFY(sender->connectTo(broker.port()));
    const auto publish = [&](const QByteArray &queue, const QByteArray &id, qsizetype size) {
        return sender->request("publish CipherMQ_exchange " + queue + " " + envelope(id, size));
    };
    for (const QByteArray id : {"m-1", "m-2", "m-3", "m-4"})
        QCOMPARE(publish("receiver_1_big", id, kSize), "ACK " + id);
    const QByteArray refused = publish("receiver_1_big", "m-5", kSize);
    QVERIFY2(refused.startsWith("Error: Memory alarm: the broker holds ") &&
                 refused.endsWith(" MiB budget (performance.memory_budget_mb): message m-5 "
                                  "rejected"),
             refused.constData());
    // While it is on, every publish is refused, small ones to other queues too; the rest of
    // the protocol goes on.
    QVERIFY(publish("receiver_1_small", "s-1", 8).startsWith("Error: Memory alarm: "));
    QCOMPARE(sender->request("heartbeat 30"), "Heartbeat 30");
    QJsonObject memory = memorySection(admin);
    QCOMPARE(memory.value("alarm").toBool(), true);
    QCOMPARE(memory.value("alarms_raised").toInt(), 1);
    QCOMPARE(memory.value("publishes_refused").toInt(), 2);
    QVERIFY(memory.value("message_bytes").toInteger() >= 4 * kSize);
    QVERIFY(memory.value("used_bytes").toInteger() <= 4 << 20);
    const QByteArray metrics = [&] {
        admin.send("metrics");
        QByteArray text;
        for (QByteArray line = admin.readLine(); !line.isNull() && line != "# EOF";
             line = admin.readLine())
            text += line + '\n';
        return text;
    }();
    QVERIFY2(metrics.contains("\nciphermq_memory_alarm 1\n"), metrics.constData());
    QVERIFY(metrics.contains("\nciphermq_memory_alarm_refusals_total 2\n"));
    QVERIFY(metrics.contains("\nciphermq_memory_budget_bytes 4194304\n"));

    // The budget counts what a restart restores: still too full for another 1 MB.
    receiver.reset();
    sender.reset();
    QVERIFY(broker.terminate());
    QVERIFY2(broker.start(), broker.output().constData());
    sender = std::make_unique<TestClient>("sender_1");
    QVERIFY(sender->connectTo(broker.port()));
    QVERIFY(publish("receiver_1_big", "m-5", kSize).startsWith("Error: Memory alarm: "));

    // Consumers drain it: below 90% of the budget the alarm goes off and publishes pass again.
    receiver = std::make_unique<TestClient>("receiver_1");
    QVERIFY(receiver->connectTo(broker.port()));
    for (const QByteArray id : {"m-1", "m-2"}) {
        QCOMPARE(receiver->request("fetch receiver_1_big").left(13), "Message: " + id + " ");
        QCOMPARE(receiver->request("ack " + id), "ACK_CONFIRMED " + id);
    }
    QCOMPARE(publish("receiver_1_big", "m-5", kSize), "ACK m-5");
    TestClient adminAfterRestart("ops-admin");
    QVERIFY(adminAfterRestart.connectTo(adminPort));
    memory = memorySection(adminAfterRestart);
    QCOMPARE(memory.value("alarm").toBool(), false);
    QCOMPARE(memory.value("alarms_raised").toInt(), 1);
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_Memory)
#include "tst_19_memory.moc"
