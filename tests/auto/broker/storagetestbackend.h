#pragma once
// What the Storage tests share: a database of either driver to open a Storage on (a SQLite file,
// or a fresh database on the PostgreSQL fixture), the rows they publish, waiting for a callback's
// value, and the driver rows every test runs with.

#include <memory>
#include <numeric>
#include <optional>

#include <QDir>
#include <QSignalSpy>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include "storage/libpq.h"
#include "storage/migrations.h"
#include "storage/publishstore.h"
#include "storage/sqlsession.h"
#include "storage/storage.h"
#include "testenv.h"
#include "testpostgres.h"

namespace cmq::storagetest {

using namespace cmq;
using namespace cmq::storage;

constexpr int Timeout = 30000;

inline QByteArray aesKey(char fill = 'k')
{
    return QByteArray(32, fill);
}

// One database to test against: a SQLite file in a temporary directory, or a fresh database on
// the PostgreSQL fixture. raw() is a connection of the test's own for checking rows.
class Backend
{
public:
    // "postgresql-qtsql": PostgreSQL with publishing and recovery through plain QtSql
    // statements instead of libpq (the fallback path).
    explicit Backend(const QString &driver)
        : m_driver(driver.startsWith(u"postgresql") ? QStringLiteral("postgresql") : driver)
    {
        pq::setEnabled(driver != u"postgresql-qtsql");
        if (m_driver == u"postgresql") {
            QString error;
            const test::PostgresServer server = test::fixturePostgres(&error);
            if (!server.isValid()) {
                m_error = error;
                return;
            }
            m_pg = std::make_unique<test::TestDatabase>(server);
            m_error = m_pg->error();
        } else if (!m_dir.isValid()) {
            m_error = QStringLiteral("no temporary directory");
        }
    }
    ~Backend()
    {
        pq::setEnabled(true);
        if (!m_rawName.isEmpty()) {
            QSqlDatabase::database(m_rawName, false).close();
            QSqlDatabase::removeDatabase(m_rawName);
        }
    }

    QString error() const { return m_error; }
    bool isPostgres() const { return m_driver == u"postgresql"; }

    Config::Database settings() const
    {
        Config::Database db;
        db.driver = m_driver;
        db.connectAttempts = 1;
        db.connectRetryDelayMs = 10;
        if (m_pg) {
            db.hosts = {m_pg->server().host};
            db.ports = {m_pg->server().port};
            db.user = m_pg->server().user;
            db.dbname = m_pg->name();
        } else {
            db.path = m_dir.filePath(QStringLiteral("data/ciphermq.db")); // parent made on open
        }
        return db;
    }

    QSqlDatabase raw()
    {
        if (m_pg)
            return m_pg->connection();
        if (m_rawName.isEmpty()) {
            m_rawName = QStringLiteral("raw-%1").arg(quintptr(this));
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_rawName);
            db.setDatabaseName(settings().path);
        }
        QSqlDatabase db = QSqlDatabase::database(m_rawName, false);
        if (!db.isOpen())
            db.open();
        return db;
    }

    // First column of every row, as strings; "ERROR: ..." if the query fails.
    QStringList column(const QString &sql)
    {
        QSqlQuery query(raw());
        if (!query.exec(sql))
            return {QStringLiteral("ERROR: ") + query.lastError().text()};
        QStringList values;
        while (query.next())
            values << query.value(0).toString();
        return values;
    }

    bool exec(const QString &sql)
    {
        QSqlQuery query(raw());
        if (!query.exec(sql)) {
            qWarning("%s: %s", qPrintable(sql), qPrintable(query.lastError().text()));
            return false;
        }
        return true;
    }

    int count(const QString &sql) { return column(sql).value(0).toInt(); }

private:
    QString m_driver;
    QTemporaryDir m_dir;
    std::unique_ptr<test::TestDatabase> m_pg;
    QString m_error;
    QString m_rawName;
};

inline MessageRecord message(const QString &id, const QStringList &queues,
                             const QByteArray &envelope = {})
{
    MessageRecord record;
    record.messageId = id.toUtf8();
    record.sender = QStringLiteral("publisher-svc-1");
    record.exchange = QStringLiteral("orders");
    record.routingKey = QStringLiteral("worker-svc-1.new");
    record.envelope = envelope.isEmpty() ? QByteArray(R"({"message_id":")") + id.toUtf8() +
                                               R"(","ciphertext":"AAEC"})"
                                         : envelope;
    // Millisecond precision is what the database keeps.
    record.sentTime = QDateTime::fromMSecsSinceEpoch(QDateTime::currentMSecsSinceEpoch(), Qt::UTC);
    record.queues = queues;
    return record;
}

template <typename T>
std::optional<T> waitForValue(const std::function<void(std::function<void(T)>)> &call)
{
    std::optional<T> value;
    call([&value](T v) { value = std::move(v); });
    if (!QTest::qWaitFor([&] { return value.has_value(); }, Timeout))
        return std::nullopt;
    return value;
}

inline QList<PublishResult> publishAndWait(Storage &storage, const QList<MessageRecord> &records)
{
    const auto results = waitForValue<QList<PublishResult>>(
        [&](auto done) { storage.publish(records, std::move(done)); });
    return results.value_or(QList<PublishResult>{});
}

inline Status statusOf(const std::function<void(Storage::StatusCallback)> &call)
{
    const auto status = waitForValue<Status>(call);
    return status ? *status : failure(QStringLiteral("timed out"));
}

inline QList<PublishOutcome> outcomes(const QList<PublishResult> &results)
{
    QList<PublishOutcome> list;
    for (const PublishResult &result : results)
        list << result.outcome;
    return list;
}

// Message ids per queue, in recovered order.
inline QMap<QString, QStringList> entriesByQueue(const RecoveredState &state)
{
    QMap<QString, QStringList> map;
    for (const QueueEntry &entry : state.entries)
        map[entry.queue] << QString::fromUtf8(entry.messageId);
    return map;
}

inline const QueueEntry *findEntry(const RecoveredState &state, const QString &queue,
                                   const QString &id)
{
    for (const QueueEntry &entry : state.entries) {
        if (entry.queue == queue && entry.messageId == id.toUtf8())
            return &entry;
    }
    return nullptr;
}

class StorageTestBase
{
protected:
    static void addDrivers(bool bothPostgresPaths = false)
    {
        QTest::addColumn<QString>("driver");
        QTest::newRow("sqlite") << QStringLiteral("sqlite");
        QTest::newRow("postgresql") << QStringLiteral("postgresql");
        if (bothPostgresPaths)
            QTest::newRow("postgresql-qtsql") << QStringLiteral("postgresql-qtsql");
    }

    static std::unique_ptr<Storage> open(Backend &backend, RecoveredState *state = nullptr,
                                         const QByteArray &key = aesKey())
    {
        auto storage = std::make_unique<Storage>(backend.settings(), key);
        Result<RecoveredState> recovered = storage->openAndRecover();
        if (!recovered) {
            qWarning("openAndRecover failed: %s", qPrintable(recovered.error()));
            return nullptr;
        }
        if (state)
            *state = std::move(recovered).value();
        return storage;
    }
};

} // namespace cmq::storagetest

#define BACKEND(name)                                                                              \
    QFETCH(QString, driver);                                                                       \
    Backend name(driver);                                                                          \
    QVERIFY2(name.error().isEmpty(), qPrintable(name.error()))
