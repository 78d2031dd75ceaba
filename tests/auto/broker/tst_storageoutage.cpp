// Storage through PostgreSQL outages: publishes fail fast with "storage unavailable" and never
// report Stored for something that is not in the database, delivery updates survive the outage,
// and the same Storage object resumes by itself. PostgreSQL only (SQLite has no link to lose).
// The test stops and restarts a server of its own, started from the same fixture script, so the
// shared fixture keeps serving tests that run in parallel.

#include <functional>
#include <memory>
#include <optional>

#include <QElapsedTimer>
#include <QProcess>
#include <QSignalSpy>
#include <QSqlError>
#include <QSqlQuery>
#include <QTest>
#include <QTimer>

#include "storage/storage.h"
#include "testpostgres.h"

using namespace cmq;
using namespace cmq::storage;

namespace {

constexpr int Timeout = 60000;

MessageRecord message(const QString &id)
{
    MessageRecord record;
    record.messageId = id.toUtf8();
    record.sender = QStringLiteral("publisher-svc-1");
    record.exchange = QStringLiteral("orders");
    record.routingKey = QStringLiteral("worker-svc-1");
    record.envelope = QByteArray(R"({"message_id":")") + id.toUtf8() + R"(","ciphertext":"QUJD"})";
    record.sentTime = QDateTime::currentDateTimeUtc();
    record.queues = {QStringLiteral("q")};
    return record;
}

Config::Database settingsFor(const test::TestDatabase &db)
{
    Config::Database settings;
    settings.driver = QStringLiteral("postgresql");
    settings.hosts = {db.server().host};
    settings.ports = {db.server().port};
    settings.user = db.server().user;
    settings.dbname = db.name();
    settings.connectAttempts = 1;
    return settings;
}

QList<PublishResult> publishAndWait(Storage &storage, const QList<MessageRecord> &records)
{
    std::optional<QList<PublishResult>> results;
    storage.publish(records, [&](QList<PublishResult> r) { results = std::move(r); });
    if (!QTest::qWaitFor([&] { return results.has_value(); }, Timeout))
        return {};
    return *results;
}

// First column of every row; the test's connection is reopened if the restart killed it.
QStringList column(test::TestDatabase &db, const QString &sql)
{
    for (int attempt = 0; attempt < 2; ++attempt) {
        QSqlDatabase connection = db.connection();
        QSqlQuery query(connection);
        if (query.exec(sql)) {
            QStringList values;
            while (query.next())
                values << query.value(0).toString();
            return values;
        }
        connection.close();
    }
    return {QStringLiteral("ERROR")};
}

} // namespace

class tst_StorageOutage : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void stopAndStart();
    void restartWhilePublishing();

private:
    std::unique_ptr<test::PrivatePostgres> m_server;
};

void tst_StorageOutage::initTestCase()
{
    m_server = std::make_unique<test::PrivatePostgres>();
    QVERIFY2(m_server->isValid(), qPrintable(m_server->error()));
}

void tst_StorageOutage::cleanupTestCase()
{
    m_server.reset();
}

void tst_StorageOutage::stopAndStart()
{
    test::TestDatabase db(m_server->server());
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    auto storage = std::make_unique<Storage>(settingsFor(db), QByteArray(32, 'k'));
    QVERIFY(storage->openAndRecover());
    QSignalSpy availability(storage.get(), &Storage::availabilityChanged);

    QCOMPARE(publishAndWait(*storage, {message("m1"), message("m2")}).size(), 2);
    QCOMPARE(column(db, QStringLiteral("SELECT COUNT(*) FROM queue_entries")),
             QStringList{QStringLiteral("2")});
    storage->markDelivered("q", "m1");
    storage->markAcknowledged("q", "m2");

    bool stopped = false;
    const auto restart = qScopeGuard([&] {
        if (stopped)
            m_server->startServer(); // leave the server up for the next test, even on failure
    });
    QCOMPARE(m_server->stopServer(), QString());
    stopped = true;

    // The buffered updates meet the dead connection: the worker notices, keeps them, and
    // storage becomes unavailable.
    storage->flushDeliveryUpdates();
    QTRY_VERIFY_WITH_TIMEOUT(!storage->isAvailable(), Timeout);
    QCOMPARE(availability.size(), 1);
    QCOMPARE(availability.at(0).at(0).toBool(), false);

    // Publishes in the outage are refused at once, not queued.
    QElapsedTimer timer;
    timer.start();
    QList<PublishResult> results = publishAndWait(*storage, {message("m3")});
    QCOMPARE(results.size(), 1);
    QCOMPARE(results[0].outcome, PublishOutcome::Failed);
    QCOMPARE(results[0].error, QStringLiteral("storage unavailable"));
    QVERIFY(timer.elapsed() < 5000);
    std::optional<Status> saved;
    storage->saveQueue({"q2", "owner"}, [&](Status st) { saved = st; });
    QTRY_VERIFY_WITH_TIMEOUT(saved.has_value(), Timeout);
    QCOMPARE(saved->error(), QStringLiteral("storage unavailable"));

    QCOMPARE(m_server->startServer(), QString());
    stopped = false;
    QTRY_VERIFY_WITH_TIMEOUT(storage->isAvailable(), Timeout);
    QCOMPARE(availability.size(), 2);
    QCOMPARE(availability.at(1).at(0).toBool(), true);

    // The kept updates are written after reconnecting.
    QTRY_COMPARE_WITH_TIMEOUT(column(db, QStringLiteral("SELECT message_id FROM queue_entries")),
                              QStringList{QStringLiteral("m1")}, Timeout);
    QCOMPARE(column(db, QStringLiteral("SELECT status FROM message_metadata WHERE "
                                       "message_id = 'm1'")),
             QStringList{QStringLiteral("delivered")});
    // The refused publish left nothing behind, and the same Storage takes it now.
    QCOMPARE(column(db, QStringLiteral("SELECT COUNT(*) FROM message_metadata WHERE "
                                       "message_id = 'm3'")),
             QStringList{QStringLiteral("0")});
    results = publishAndWait(*storage, {message("m3")});
    QCOMPARE(results.size(), 1);
    QCOMPARE(results[0].outcome, PublishOutcome::Stored);

    storage.reset();
    Storage reopened(settingsFor(db), QByteArray(32, 'k'));
    const Result<RecoveredState> state = reopened.openAndRecover();
    QVERIFY(state);
    QCOMPARE(state->entries.size(), 2);
    QCOMPARE(state->entries[0].messageId, QByteArray("m1"));
    QVERIFY(state->entries[0].redelivered);
    QCOMPARE(state->entries[1].messageId, QByteArray("m3"));
}

void tst_StorageOutage::restartWhilePublishing()
{
    test::TestDatabase db(m_server->server());
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    auto storage = std::make_unique<Storage>(settingsFor(db), QByteArray(32, 'k'));
    QVERIFY(storage->openAndRecover());
    QSignalSpy availability(storage.get(), &Storage::availabilityChanged);

    // A pipeline of publishers, each issuing its next message when the last one is answered,
    // while the server restarts underneath.
    QHash<QString, PublishResult> results;
    int next = 0;
    bool restartDone = false;
    int storedAfterRestart = 0;
    constexpr int Window = 16;
    constexpr int WantedAfterRestart = 300;
    std::function<void()> issue = [&] {
        if (restartDone && storedAfterRestart >= WantedAfterRestart)
            return;
        const QString id = QStringLiteral("r%1").arg(next++);
        storage->publish({message(id)}, [&, id](QList<PublishResult> answer) {
            const PublishResult result = answer.value(0);
            results.insert(id, result);
            if (result.outcome == PublishOutcome::Stored && restartDone)
                ++storedAfterRestart;
            // Refusals come back at once; pace them rather than spin.
            QTimer::singleShot(result.outcome == PublishOutcome::Stored ? 0 : 20, storage.get(),
                               issue);
        });
    };
    for (int i = 0; i < Window; ++i)
        issue();
    QTRY_VERIFY_WITH_TIMEOUT(results.size() >= 200, Timeout);

    QProcess restart;
    restart.setProcessChannelMode(QProcess::MergedChannels);
    connect(&restart, &QProcess::finished, this, [&] { restartDone = true; });
    restart.start(QStringLiteral("bash"),
                  {test::postgresScriptPath(), QStringLiteral("restart"), m_server->directory()});
    QTRY_VERIFY_WITH_TIMEOUT(restartDone, 3 * Timeout);
    QCOMPARE(restart.exitCode(), 0);
    QTRY_VERIFY_WITH_TIMEOUT(storedAfterRestart >= WantedAfterRestart, 3 * Timeout);
    QVERIFY(storage->isAvailable());
    // Let the publishes still in flight finish before looking at the database.
    const int issued = next;
    QTRY_COMPARE_WITH_TIMEOUT(int(results.size()), issued, Timeout);

    const QStringList inDatabase = column(db, QStringLiteral("SELECT message_id FROM "
                                                             "message_metadata"));
    const QSet<QString> stored(inDatabase.cbegin(), inDatabase.cend());
    int storedCount = 0;
    int failedCount = 0;
    for (auto it = results.cbegin(); it != results.cend(); ++it) {
        switch (it->outcome) {
        case PublishOutcome::Stored:
            ++storedCount;
            QVERIFY2(stored.contains(it.key()),
                     qPrintable(it.key() + " was Stored but is missing"));
            break;
        case PublishOutcome::Failed:
            ++failedCount;
            QVERIFY2(!stored.contains(it.key()),
                     qPrintable(it.key() + " failed (" + it->error + ") but is in the database"));
            break;
        case PublishOutcome::Duplicate:
            QFAIL(qPrintable(it.key() + " reported as a duplicate"));
        }
    }
    QCOMPARE(stored.size(), storedCount);
    QCOMPARE(column(db, QStringLiteral("SELECT COUNT(*) FROM queue_entries")),
             QStringList{QString::number(storedCount)});
    qInfo("%d publishes: %d stored, %d refused; availability changes: %lld", int(results.size()),
          storedCount, failedCount, qint64(availability.size()));
}

QTEST_GUILESS_MAIN(tst_StorageOutage)
#include "tst_storageoutage.moc"
