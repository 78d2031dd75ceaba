// performance.deliver_before_commit against the real broker (SQLite, whose commit a test can
// hold up by taking the database's write lock): a publish reaches its consumer while its commit
// is still waiting, the publisher's ACK still waits for the commit, a consumer's ack that
// arrives before the commit is applied after it, and a broker killed between the delivery and
// the commit loses nothing the publisher was told about: the publisher, never acknowledged,
// sends again and the message is delivered again (at least once). With the setting off, the
// delivery waits for the commit.

#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

#include "brokerdatabase.h"
#include "brokerprocess.h"
#include "testclient.h"

using namespace cmq::test;

static const QByteArray kQueue = "receiver_1_early";
static const QByteArray kPublish = "publish CipherMQ_exchange " + kQueue + " ";

static QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":")" +
           QByteArray(700, 'C') + R"("})";
}

// Holds the SQLite write lock of a broker's database while it lives: the broker's commits wait
// (its busy timeout is 5 s), its reads do not.
class WriteLock
{
public:
    explicit WriteLock(const BrokerProcess &broker)
    {
        m_db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
        m_db.setDatabaseName(broker.dataDir() + QStringLiteral("/data/ciphermq.db"));
        if (m_db.open())
            m_held = QSqlQuery(m_db).exec(QStringLiteral("BEGIN IMMEDIATE"));
    }
    ~WriteLock()
    {
        release();
        m_db.close();
        m_db = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_name);
    }
    bool held() const { return m_held; }
    void release()
    {
        if (m_held)
            QSqlQuery(m_db).exec(QStringLiteral("ROLLBACK"));
        m_held = false;
    }

private:
    QString m_name = QStringLiteral("write-lock");
    QSqlDatabase m_db;
    bool m_held = false;
};

class tst_DeliverBeforeCommit : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void deliveredWhileCommitWaits_data();
    void deliveredWhileCommitWaits();
    void ackBeforeCommitIsApplied();
    void killBetweenDeliveryAndCommit();
    void failedCommitIsNoDuplicate();

private:
    static void start(BrokerProcess &broker, bool early);
    // A consumer of kQueue, with the warm-up message published, delivered and acked, so the
    // next publish is the only write waiting.
    static void warmUp(TestClient &publisher, TestClient &consumer, quint16 port);
    // With the commit held up: `id` is published, delivered, acked, and not yet ACKed.
    static void ackWhileCommitWaits(TestClient &publisher, TestClient &consumer,
                                    const QByteArray &id);
};

void tst_DeliverBeforeCommit::start(BrokerProcess &broker, bool early)
{
    broker.set("performance.deliver_before_commit", early ? "true" : "false");
    QVERIFY2(broker.start(), broker.output().constData());
}

void tst_DeliverBeforeCommit::warmUp(TestClient &publisher, TestClient &consumer, quint16 port)
{
    QVERIFY(consumer.connectTo(port));
    QCOMPARE(consumer.request("declare_queue " + kQueue), "Queue declared");
    QCOMPARE(consumer.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(consumer.request("bind " + kQueue + " CipherMQ_exchange " + kQueue), "Queue bound");
    consumer.send("consume " + kQueue);
    QVERIFY(publisher.connectTo(port));
    QCOMPARE(publisher.request(kPublish + envelope("warm-up")), "ACK warm-up");
    QVERIFY(!consumer.readLineStartingWith("Message: warm-up").isNull());
    QCOMPARE(consumer.request("ack warm-up"), "ACK_CONFIRMED warm-up");
}

void tst_DeliverBeforeCommit::ackWhileCommitWaits(TestClient &publisher, TestClient &consumer,
                                                  const QByteArray &id)
{
    publisher.send(kPublish + envelope(id));
    QVERIFY(!consumer.readLineStartingWith("Message: " + id, 4000).isNull());
    QCOMPARE(consumer.request("ack " + id), "ACK_CONFIRMED " + id);
    QVERIFY2(publisher.nothingWithin(300), "ACK before the commit");
}

void tst_DeliverBeforeCommit::deliveredWhileCommitWaits_data()
{
    QTest::addColumn<bool>("early");
    QTest::newRow("deliver_before_commit = true") << true;
    QTest::newRow("deliver_before_commit = false") << false;
}

void tst_DeliverBeforeCommit::deliveredWhileCommitWaits()
{
    QFETCH(bool, early);
    BrokerProcess broker;
    start(broker, early);
    TestClient publisher("sender_1");
    TestClient consumer("receiver_1");
    warmUp(publisher, consumer, broker.port());

    WriteLock lock(broker);
    QVERIFY(lock.held());
    publisher.send(kPublish + envelope("held-1"));
    if (early) {
        QVERIFY(!consumer.readLineStartingWith("Message: held-1", 4000).isNull());
    } else {
        QVERIFY2(consumer.nothingWithin(1000), "delivered before the commit");
    }
    QVERIFY2(publisher.nothingWithin(300), "ACK before the commit");
    lock.release();
    QCOMPARE(publisher.readLine(), "ACK held-1");
    if (!early)
        QVERIFY(!consumer.readLineStartingWith("Message: held-1").isNull());
    QCOMPARE(consumer.request("ack held-1"), "ACK_CONFIRMED held-1");
    QVERIFY(broker.terminate());
}

void tst_DeliverBeforeCommit::ackBeforeCommitIsApplied()
{
    BrokerProcess broker;
    start(broker, true);
    {
        TestClient publisher("sender_1");
        TestClient consumer("receiver_1");
        warmUp(publisher, consumer, broker.port());

        WriteLock lock(broker);
        QVERIFY(lock.held());
        ackWhileCommitWaits(publisher, consumer, "acked-early");
        if (QTest::currentTestFailed())
            return;
        lock.release();
        QCOMPARE(publisher.readLine(), "ACK acked-early");
    }
    QVERIFY(broker.terminate()); // writes the buffered delivery updates

    {
        BrokerDatabase db(broker, nullptr);
        QVERIFY2(db.isOpen(), qPrintable(db.error()));
        QCOMPARE(db.number("SELECT count(*) FROM queue_entries WHERE message_id = 'acked-early'"),
                 0);
        QCOMPARE(db.number("SELECT count(*) FROM message_metadata WHERE message_id = "
                           "'acked-early' AND status = 'acknowledged'"),
                 1);
    }
    // And after a restart it is not delivered again.
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient consumer("receiver_1");
    QVERIFY(consumer.connectTo(broker.port()));
    QCOMPARE(consumer.request("consume " + kQueue), "Subscribed to queue");
    QVERIFY2(consumer.nothingWithin(1000), "an acknowledged message came back");
    QVERIFY(broker.terminate());
}

void tst_DeliverBeforeCommit::killBetweenDeliveryAndCommit()
{
    BrokerProcess broker;
    start(broker, true);
    TestClient publisher("sender_1");
    TestClient consumer("receiver_1");
    warmUp(publisher, consumer, broker.port());
    {
        WriteLock lock(broker);
        QVERIFY(lock.held());
        ackWhileCommitWaits(publisher, consumer, "crash-1");
        if (QTest::currentTestFailed())
            return;
        broker.kill(); // the commit never happens
    }
    {
        BrokerDatabase db(broker, nullptr);
        QVERIFY2(db.isOpen(), qPrintable(db.error()));
        QCOMPARE(db.number("SELECT count(*) FROM message_metadata WHERE message_id = 'crash-1'"),
                 0);
    }

    // The publisher never got its ACK, so it sends again: stored now, and delivered again.
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient again("sender_1");
    TestClient consumerAgain("receiver_1");
    QVERIFY(consumerAgain.connectTo(broker.port()));
    consumerAgain.send("consume " + kQueue);
    QVERIFY(again.connectTo(broker.port()));
    QCOMPARE(again.request(kPublish + envelope("crash-1")), "ACK crash-1");
    QVERIFY(!consumerAgain.readLineStartingWith("Message: crash-1").isNull());
    QCOMPARE(consumerAgain.request("ack crash-1"), "ACK_CONFIRMED crash-1");
    QVERIFY(broker.terminate());
}

// The commit fails (the lock outlasts SQLite's 5 s busy timeout) after the message went to a
// consumer, who still holds it: the publisher's resend is stored, not called "Duplicate".
void tst_DeliverBeforeCommit::failedCommitIsNoDuplicate()
{
    BrokerProcess broker;
    start(broker, true);
    TestClient publisher("sender_1");
    TestClient consumer("receiver_1");
    warmUp(publisher, consumer, broker.port());
    {
        WriteLock lock(broker);
        QVERIFY(lock.held());
        publisher.send(kPublish + envelope("fails-1"));
        QVERIFY(!consumer.readLineStartingWith("Message: fails-1", 4000).isNull());
        const QByteArray refused = publisher.readLine(60000);
        QVERIFY2(refused.startsWith("Error: ") && !refused.contains("Duplicate"),
                 refused.constData());
    }
    QCOMPARE(publisher.request(kPublish + envelope("fails-1"), 30000), "ACK fails-1");
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_DeliverBeforeCommit)
#include "tst_54_deliver_before_commit.moc"
