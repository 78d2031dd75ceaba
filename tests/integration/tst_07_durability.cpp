// What "ACK <id>" promises, against the real broker on both storage drivers: every ACKed message
// of a pipelined stream is delivered after the broker is SIGKILLed mid-stream and restarted; no
// message that got an error is ever delivered; unacked deliveries come back flagged after a
// restart; duplicate ids are refused across restarts; and (PostgreSQL) a database restart in
// the middle of a stream loses nothing and needs no broker restart; an id published again while
// its first commit is pending gets that commit's outcome, never "Duplicate".

#include <memory>
#include <vector>

#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testpostgres.h"

using namespace cmq::test;

static QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id
           + R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":")"
           + QByteArray(700, 'C') + R"("})";
}

struct StreamOutcome
{
    QSet<QByteArray> acked;
    QSet<QByteArray> refused;
};

class tst_Durability : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void killMidStream_data();
    void killMidStream();
    void redeliveredAfterRestart_data();
    void redeliveredAfterRestart();
    void duplicatesAcrossRestart_data();
    void duplicatesAcrossRestart();
    void postgresRestartMidStream();
    void inflightRepublishFollowsCommit();

private:
    void configure(BrokerProcess &broker, const QString &driver);
    static void declare(quint16 port, const QByteArray &queue);
    static QSet<QByteArray> drain(quint16 port, const QByteArray &queue,
                                  QSet<QByteArray> *redelivered = nullptr);

    PostgresServer m_fixture;
    std::vector<std::unique_ptr<TestDatabase>> m_databases; // dropped when the test ends
};

void tst_Durability::initTestCase()
{
    QString error;
    m_fixture = fixturePostgres(&error);
    QVERIFY2(m_fixture.isValid(), qPrintable(error));
}

void tst_Durability::configure(BrokerProcess &broker, const QString &driver)
{
    if (driver == QLatin1String("postgresql")) {
        const auto &database = m_databases.emplace_back(std::make_unique<TestDatabase>(m_fixture));
        QVERIFY2(database->isValid(), qPrintable(database->error()));
        broker.usePostgres(m_fixture.host, m_fixture.port, m_fixture.user, database->name());
    }
    broker.set("performance.max_queue_size", "100000");
}

void tst_Durability::declare(quint16 port, const QByteArray &queue)
{
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(port));
    QCOMPARE(receiver.request("declare_queue " + queue), "Queue declared");
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("bind " + queue + " CipherMQ_exchange " + queue), "Queue bound");
}

// Consumes until the queue stays quiet, acking everything; returns the ids received.
QSet<QByteArray> tst_Durability::drain(quint16 port, const QByteArray &queue,
                                       QSet<QByteArray> *redelivered)
{
    TestClient receiver("receiver_1");
    if (!receiver.connectTo(port))
        return {};
    receiver.send("qos 0");
    receiver.send("consume " + queue);
    QSet<QByteArray> received;
    for (;;) {
        // Deliveries of what was recovered start at once; 3 s of silence means done.
        const QByteArray line = receiver.readLine(3000);
        if (line.isNull())
            break;
        if (line.startsWith("Redelivered: ") && redelivered)
            redelivered->insert(line.mid(13));
        if (line.startsWith("Message: ")) {
            const QByteArray id = line.mid(9, line.indexOf(' ', 9) - 9);
            received.insert(id);
            receiver.send("ack " + id);
        }
    }
    return received;
}

void tst_Durability::killMidStream_data()
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("sqlite") << "sqlite";
    QTest::newRow("postgresql") << "postgresql";
}

void tst_Durability::killMidStream()
{
    QFETCH(QString, driver);
    BrokerProcess broker;
    configure(broker, driver);
    QVERIFY2(broker.start(), broker.output().constData());
    declare(broker.port(), "receiver_1_kill");

    StreamOutcome all;
    // Several kill points: early, middle, late in a pipelined stream of 1500.
    for (const int killAfter : {50, 600, 1300}) {
        TestClient sender("sender_1");
        QVERIFY(sender.connectTo(broker.port()));
        QByteArray stream;
        const QByteArray round = QByteArray::number(killAfter);
        for (int i = 0; i < 1500; ++i) {
            stream += "publish CipherMQ_exchange receiver_1_kill "
                      + envelope("k" + round + "-" + QByteArray::number(i)) + "\n";
        }
        sender.sendRaw(stream);
        int acks = 0;
        while (acks < killAfter) {
            const QByteArray line = sender.readLine(30000);
            QVERIFY2(!line.isNull(), "the stream stalled before the kill point");
            if (line.startsWith("ACK ")) {
                ++acks;
                all.acked.insert(line.mid(4));
            } else {
                all.refused.insert(line);
            }
        }
        broker.kill();
        // Replies already on their way before the kill still count.
        for (QByteArray line = sender.readLine(2000); !line.isNull(); line = sender.readLine(2000)) {
            if (line.startsWith("ACK "))
                all.acked.insert(line.mid(4));
        }
        QVERIFY2(broker.start(), broker.output().constData());
    }
    QVERIFY(all.acked.size() >= 50 + 600 + 1300);
    QVERIFY2(all.refused.isEmpty(), qPrintable(all.refused.values().value(0)));

    const QSet<QByteArray> received = drain(broker.port(), "receiver_1_kill");
    const QSet<QByteArray> lost = all.acked - received;
    QVERIFY2(lost.isEmpty(), qPrintable(QStringLiteral("%1 acknowledged messages lost, e.g. %2")
                                            .arg(lost.size())
                                            .arg(QString::fromUtf8(lost.values().value(0)))));
    QVERIFY(broker.terminate());
}

void tst_Durability::redeliveredAfterRestart_data()
{
    killMidStream_data();
}

void tst_Durability::redeliveredAfterRestart()
{
    QFETCH(QString, driver);
    BrokerProcess broker;
    configure(broker, driver);
    QVERIFY2(broker.start(), broker.output().constData());
    declare(broker.port(), "receiver_1_rd");
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    for (const QByteArray id : {"rd-1", "rd-2", "rd-3"})
        QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_rd " + envelope(id)),
                 "ACK " + id);
    TestClient consumer("receiver_1");
    QVERIFY(consumer.connectTo(broker.port()));
    QCOMPARE(consumer.request("fetch receiver_1_rd").left(14), "Message: rd-1 ");
    QCOMPARE(consumer.request("ack rd-1"), "ACK_CONFIRMED rd-1");
    QCOMPARE(consumer.request("fetch receiver_1_rd").left(14), "Message: rd-2 ");
    // rd-2 delivered and never acked; rd-3 never delivered. A graceful stop writes the
    // delivery state it has buffered.
    QVERIFY(broker.terminate());
    QCOMPARE(broker.exitCode(), 0);
    QVERIFY2(broker.start(), broker.output().constData());

    QSet<QByteArray> redelivered;
    const QSet<QByteArray> received = drain(broker.port(), "receiver_1_rd", &redelivered);
    QCOMPARE(received, (QSet<QByteArray>{"rd-2", "rd-3"}));
    QCOMPARE(redelivered, (QSet<QByteArray>{"rd-2"}));
    QVERIFY(broker.terminate());
}

void tst_Durability::duplicatesAcrossRestart_data()
{
    killMidStream_data();
}

void tst_Durability::duplicatesAcrossRestart()
{
    QFETCH(QString, driver);
    BrokerProcess broker;
    configure(broker, driver);
    QVERIFY2(broker.start(), broker.output().constData());
    declare(broker.port(), "receiver_1_dup");
    {
        TestClient sender("sender_1");
        QVERIFY(sender.connectTo(broker.port()));
        QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_dup " + envelope("dup-1")),
                 "ACK dup-1");
        QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_dup " + envelope("dup-2")),
                 "ACK dup-2");
    }
    // dup-1 is consumed and acknowledged; dup-2 is still queued.
    TestClient consumer("receiver_1");
    QVERIFY(consumer.connectTo(broker.port()));
    QCOMPARE(consumer.request("fetch receiver_1_dup").left(15), "Message: dup-1 ");
    QCOMPARE(consumer.request("ack dup-1"), "ACK_CONFIRMED dup-1");
    broker.kill();
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_dup " + envelope("dup-1")),
             "Error: Duplicate message dup-1 ignored");
    QCOMPARE(sender.request("publish CipherMQ_exchange receiver_1_dup " + envelope("dup-2")),
             "Error: Duplicate message dup-2 ignored");
    QVERIFY(broker.terminate());
}

void tst_Durability::postgresRestartMidStream()
{
    PrivatePostgres postgres;
    QVERIFY2(postgres.isValid(), qPrintable(postgres.error()));
    TestDatabase database(postgres.server());
    QVERIFY2(database.isValid(), qPrintable(database.error()));
    BrokerProcess broker;
    broker.usePostgres(database);
    QVERIFY2(broker.start(), broker.output().constData());
    declare(broker.port(), "receiver_1_pg");

    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    StreamOutcome outcome;
    int sequence = 0;
    // Publish in windows of 50 before, during and after a PostgreSQL restart, until publishes
    // succeed again after the outage.
    const auto window = [&] {
        QByteArray lines;
        for (int i = 0; i < 50; ++i) {
            lines += "publish CipherMQ_exchange receiver_1_pg "
                     + envelope("pg-" + QByteArray::number(sequence++)) + "\n";
        }
        sender.sendRaw(lines);
        int afterError = 0;
        for (int i = 0; i < 50; ++i) {
            const QByteArray line = sender.readLine(60000);
            if (line.isNull())
                return -1;
            if (line.startsWith("ACK ")) {
                outcome.acked.insert(line.mid(4));
            } else {
                if (!line.startsWith("Error: "))
                    return -1;
                outcome.refused.insert(line);
                ++afterError;
            }
        }
        return afterError;
    };
    for (int i = 0; i < 4; ++i)
        QCOMPARE(window(), 0);
    QCOMPARE(postgres.restartServer(), QString());
    bool recovered = false;
    QDeadlineTimer deadline(90000);
    while (!deadline.hasExpired()) {
        const int errors = window();
        QVERIFY2(errors >= 0, "the broker stopped answering or answered oddly");
        if (errors == 0 && !outcome.acked.isEmpty()) {
            recovered = true;
            break;
        }
    }
    QVERIFY2(recovered, "publishes did not succeed again after PostgreSQL came back");
    QCOMPARE(window(), 0);

    const QSet<QByteArray> received = drain(broker.port(), "receiver_1_pg");
    QCOMPARE(received - outcome.acked, QSet<QByteArray>{}); // nothing refused was delivered
    QCOMPARE(outcome.acked - received, QSet<QByteArray>{}); // nothing acked was lost
    QVERIFY(broker.terminate());
}

// A raw connection of the test's own to the broker's database (holds locks, reads rows).
static QSqlDatabase openRaw(const PostgresServer &server, const QString &database,
                            const QString &name)
{
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), name);
    db.setHostName(server.host);
    db.setPort(server.port);
    db.setUserName(server.user);
    db.setDatabaseName(database);
    if (!db.open())
        qWarning("cannot open %s: %s", qPrintable(database), qPrintable(db.lastError().text()));
    return db;
}

static int queryInt(QSqlDatabase db, const QString &sql)
{
    QSqlQuery query(db);
    if (!query.exec(sql) || !query.next()) {
        qWarning("%s: %s", qPrintable(sql), qPrintable(query.lastError().text()));
        return -1;
    }
    return query.value(0).toInt();
}

// A client that lost its connection publishes the same id again while the first commit is still
// held up. The second answer must follow the first's outcome: "ACK" once it commits, the same
// error when it fails; "Duplicate" would make the client drop a message that exists nowhere.
void tst_Durability::inflightRepublishFollowsCommit()
{
    PrivatePostgres postgres;
    QVERIFY2(postgres.isValid(), qPrintable(postgres.error()));
    TestDatabase database(postgres.server());
    QVERIFY2(database.isValid(), qPrintable(database.error()));
    BrokerProcess broker;
    broker.usePostgres(database);
    QVERIFY2(broker.start(), broker.output().constData());
    declare(broker.port(), "receiver_1_inflight");
    const QByteArray publish = "publish CipherMQ_exchange receiver_1_inflight ";

    TestClient first("sender_1");
    TestClient second("sender_1");
    QVERIFY(first.connectTo(broker.port()));
    QVERIFY(second.connectTo(broker.port()));
    // Warm up the storage connection so the held-up publish is the only statement waiting.
    QCOMPARE(first.request(publish + envelope("warm-up")), "ACK warm-up");

    const QString dbName = database.name();
    const PostgresServer server = postgres.server();
    {
        QSqlDatabase locker = openRaw(server, dbName, QStringLiteral("locker"));
        QSqlDatabase watcher = openRaw(server, dbName, QStringLiteral("watcher"));
        QVERIFY(locker.isOpen() && watcher.isOpen());
        const QString waitingOnLock = QStringLiteral(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO message_metadata%'");
        const auto holdLock = [&] {
            QVERIFY(locker.transaction());
            QSqlQuery lock(locker);
            QVERIFY2(lock.exec(QStringLiteral("LOCK TABLE message_metadata IN EXCLUSIVE MODE")),
                     qPrintable(lock.lastError().text()));
        };

        // 1. The commit is held up, then goes through: both publishes are acknowledged.
        holdLock();
        first.send(publish + envelope("held-1"));
        QTRY_VERIFY_WITH_TIMEOUT(queryInt(watcher, waitingOnLock) > 0, 30000);
        second.send(publish + envelope("held-1"));
        QVERIFY2(second.nothingWithin(300), "answered while the first commit is still pending");
        QVERIFY(locker.commit());
        QCOMPARE(first.readLine(30000), "ACK held-1");
        QCOMPARE(second.readLine(30000), "ACK held-1");
        // Now it is committed: that, and only that, is a duplicate.
        QCOMPARE(second.request(publish + envelope("held-1")),
                 "Error: Duplicate message held-1 ignored");

        // 2. The commit is held up, then the database crashes: neither is acknowledged.
        holdLock();
        first.send(publish + envelope("held-2"));
        QTRY_VERIFY_WITH_TIMEOUT(queryInt(watcher, waitingOnLock) > 0, 30000);
        second.send(publish + envelope("held-2"));
        QVERIFY2(second.nothingWithin(300), "answered while the first commit is still pending");
        // The lock stays held until the crash kills its holder with everything else.
        QCOMPARE(postgres.crashServer(), QString());
        locker.close();
        watcher.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("locker"));
    QSqlDatabase::removeDatabase(QStringLiteral("watcher"));
    // The database comes back only once the broker has given up on the commit: its outcome is
    // then in doubt and settled after reconnecting (it never committed: the lock held it).
    QTRY_VERIFY_WITH_TIMEOUT(broker.output().contains("database unavailable"), 60000);
    QCOMPARE(postgres.startServer(), QString());
    const QByteArray firstReply = first.readLine(90000);
    const QByteArray secondReply = second.readLine(90000);
    qInfo("after the crash: first %s, second %s", firstReply.constData(), secondReply.constData());
    QVERIFY2(firstReply.startsWith("Error: ") && !firstReply.contains("Duplicate"),
             firstReply.constData());
    QCOMPARE(secondReply, firstReply);

    {
        QSqlDatabase check = openRaw(server, dbName, QStringLiteral("check-after"));
        QCOMPARE(queryInt(check, QStringLiteral("SELECT count(*) FROM message_metadata WHERE "
                                                "message_id = 'held-2'")),
                 0);
        check.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("check-after"));
    // The client's outbox resends it, and now it goes through.
    QCOMPARE(second.request(publish + envelope("held-2"), 60000), "ACK held-2");
    QVERIFY(broker.terminate());
}

QTEST_GUILESS_MAIN(tst_Durability)
#include "tst_07_durability.moc"
