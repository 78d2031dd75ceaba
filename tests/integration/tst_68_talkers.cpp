// Top talkers (docs/ADMIN-PROTOCOL.md, "Talker object"): the admin snapshot's per-CN totals of
// publishes, deliveries, requests and bytes follow what two identities publishing at different
// rates really did, add up a CN's connections, outlive a closed connection, and are a section
// a watch can select.

#include "adminfixture.h"

using namespace cmq::test;

class tst_Talkers : public QObject, public AdminFixture
{
    Q_OBJECT

private Q_SLOTS:
    void init() { QVERIFY(startBroker()); }
    void cleanup() { QVERIFY(stopBroker()); }
    void figuresFollowTraffic();
    void closedConnectionsStayCounted();
    void watchSection();

private:
    QJsonObject talker(const QString &cn)
    {
        return findBy(ask("talkers").toArray(), QStringLiteral("cn"), cn);
    }
    void publishAs(TestClient *client, const QByteArray &id)
    {
        QCOMPARE(client->request("publish CipherMQ_exchange receiver_1_talk " +
                                 adminTestEnvelope(id)),
                 "ACK " + id);
    }
};

void tst_Talkers::figuresFollowTraffic()
{
    ownQueue("talk");
    TestClient *light = dataClient("svc-a");
    // sender_1 publishes five messages for each one of svc-a's; after every round the
    // snapshot's totals are exactly what was published.
    for (int round = 1; round <= 4; ++round) {
        for (int i = 0; i < 5; ++i)
            publishAs(m_sender, QStringLiteral("heavy-%1-%2").arg(round).arg(i).toUtf8());
        publishAs(light, QStringLiteral("light-%1").arg(round).toUtf8());
        const QJsonArray talkers = ask("talkers").toArray();
        const QJsonObject heavy = findBy(talkers, QStringLiteral("cn"), "sender_1");
        const QJsonObject lightOne = findBy(talkers, QStringLiteral("cn"), "svc-a");
        QCOMPARE(heavy.value("publishes").toInteger(), 5 * round);
        QCOMPARE(lightOne.value("publishes").toInteger(), round);
        QCOMPARE(heavy.value("connections").toInt(), 1);
        QCOMPARE(heavy.value("deliveries").toInteger(), 0);
        QVERIFY(heavy.value("bytes_in").toInteger() > 5 * lightOne.value("bytes_in").toInteger() -
                                                          200);
        QVERIFY(heavy.value("requests").toInteger() >= 5 * round);
        QCOMPARE(heavy.value("idle_seconds").toDouble(), 0.0);
    }
    // Only data-listener identities are talkers: not the admin asking.
    QVERIFY(talker(QStringLiteral("ops-admin")).isEmpty());

    // Deliveries go to the consumer's CN, with the bytes it was sent.
    TestClient *consumer = dataClient("receiver_1");
    QCOMPARE(consumer->request("consume receiver_1_talk"), "Subscribed to queue");
    for (int i = 0; i < 24; ++i)
        QVERIFY(consumer->readLineStartingWith("Message: ").startsWith("Message: "));
    const QJsonObject receiver = talker(QStringLiteral("receiver_1"));
    QCOMPARE(receiver.value("deliveries").toInteger(), 24);
    QCOMPARE(receiver.value("publishes").toInteger(), 0);
    QVERIFY(receiver.value("bytes_out").toInteger() > 24 * 100);
    // startBroker's receiver, ownQueue's and the consumer: one identity, three connections.
    QCOMPARE(receiver.value("connections").toInt(), 3);
}

void tst_Talkers::closedConnectionsStayCounted()
{
    ownQueue("talk");
    TestClient *second = dataClient("sender_1");
    publishAs(m_sender, "first-conn");
    publishAs(second, "second-conn-1");
    publishAs(second, "second-conn-2");
    QCOMPARE(talker(QStringLiteral("sender_1")).value("publishes").toInteger(), 3);
    QCOMPARE(talker(QStringLiteral("sender_1")).value("connections").toInt(), 2);

    second->disconnect();
    QTRY_COMPARE_WITH_TIMEOUT(talker(QStringLiteral("sender_1")).value("connections").toInt(), 1,
                              15000);
    QCOMPARE(talker(QStringLiteral("sender_1")).value("publishes").toInteger(), 3);

    // With no connection left the identity stays, with what it did and how long it is idle.
    m_sender->disconnect();
    QTRY_COMPARE_WITH_TIMEOUT(talker(QStringLiteral("sender_1")).value("connections").toInt(-1),
                              0, 15000);
    QCOMPARE(talker(QStringLiteral("sender_1")).value("publishes").toInteger(), 3);
    QTRY_VERIFY_WITH_TIMEOUT(talker(QStringLiteral("sender_1")).value("idle_seconds").toDouble() >=
                                 0.5,
                             15000);
}

void tst_Talkers::watchSection()
{
    ownQueue("talk");
    TestClient *watcher = adminClient();
    const QJsonObject reply = parseAdminReply(watcher->request("watch 100 talkers")).toObject();
    QCOMPARE(reply.value("sections").toArray(), (QJsonArray{QStringLiteral("talkers")}));
    const QJsonObject first = parseAdminReply(watcher->readLine(5000).mid(10)).toObject();
    QVERIFY(first.value("talkers").isArray());
    QVERIFY(!first.contains("queues"));
    QVERIFY(!first.contains("connections"));

    publishAs(m_sender, "watched-1");
    publishAs(m_sender, "watched-2");
    // The stream shows the publishes within a few snapshots.
    const auto publishesIn = [](const QJsonObject &snapshot) {
        return findBy(snapshot.value("talkers").toArray(), QStringLiteral("cn"), "sender_1")
            .value("publishes")
            .toInteger();
    };
    qint64 seen = 0;
    QTRY_VERIFY_WITH_TIMEOUT(
        (seen = publishesIn(parseAdminReply(watcher->readLineStartingWith("Snapshot: ", 5000)
                                                .mid(10))
                                .toObject())) == 2,
        15000);
    QCOMPARE(seen, 2);

    // The full snapshot has the section too, and a watch of other sections leaves it out.
    QVERIFY(ask("json").toObject().value("talkers").isArray());
    watcher->send("watch 100 queues");
    watcher->readLineStartingWith("{", 5000);
    const QJsonObject queuesOnly =
        parseAdminReply(watcher->readLineStartingWith("Snapshot: ", 5000).mid(10)).toObject();
    QVERIFY(queuesOnly.contains("queues"));
    QVERIFY(!queuesOnly.contains("talkers"));
}

QTEST_GUILESS_MAIN(tst_Talkers)
#include "tst_68_talkers.moc"
