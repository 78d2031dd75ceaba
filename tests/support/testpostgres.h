#pragma once
// PostgreSQL for storage tests: a fresh, uniquely named database per test on the fixture server
// (so tests run in parallel and start from nothing), raw connections for assertions, and a
// private server of one's own for tests that stop and restart it.

#include <QSqlDatabase>
#include <QString>
#include <QTemporaryDir>

namespace cmq::test {

struct PostgresServer
{
    QString host = QStringLiteral("127.0.0.1");
    quint16 port = 0;
    QString user = QStringLiteral("postgres");
    bool isValid() const { return port != 0; }
};

// The fixture server started by CTest ($CMQ_TEST_POSTGRES/connection). Invalid, with *error
// set, when the fixture is missing.
PostgresServer fixturePostgres(QString *error);

// The path of tests/support/postgres.sh, for running it asynchronously.
QString postgresScriptPath();

// Runs `tests/support/postgres.sh ACTION DIR` to completion. Returns an empty string on success,
// else the script's output.
QString runPostgresScript(const QString &action, const QString &dir);

// A database created on construction and dropped (with its connections) on destruction.
class TestDatabase
{
public:
    explicit TestDatabase(const PostgresServer &server);
    TestDatabase(); // on the fixture server (invalid, with error(), when it is missing)
    ~TestDatabase();
    TestDatabase(const TestDatabase &) = delete;
    TestDatabase &operator=(const TestDatabase &) = delete;

    bool isValid() const { return m_error.isEmpty(); }
    QString error() const { return m_error; }
    QString name() const { return m_name; }
    const PostgresServer &server() const { return m_server; }

    // A connection of the test's own (on the calling thread) for reading rows back.
    QSqlDatabase connection();

private:
    PostgresServer m_server;
    QString m_name;
    QString m_error;
    QString m_connectionName;
};

// Holds up the broker's writes to one table: a transaction of the test's own connection holding
// `LOCK TABLE <table> IN EXCLUSIVE MODE` (reads go on, writes wait) until release() or
// destruction. error() is empty while the lock is held.
class TableLock
{
public:
    TableLock(TestDatabase &database, const QString &table);
    ~TableLock();
    TableLock(const TableLock &) = delete;
    TableLock &operator=(const TableLock &) = delete;

    QString error() const { return m_error; }
    bool release(); // commits: the waiting writes go ahead

private:
    QSqlDatabase m_connection;
    bool m_held = false;
    QString m_error;
};

// A server of the test's own, for outage tests that must not disturb the shared fixture.
class PrivatePostgres
{
public:
    PrivatePostgres(); // initdb + start; check isValid()
    ~PrivatePostgres();
    PrivatePostgres(const PrivatePostgres &) = delete;
    PrivatePostgres &operator=(const PrivatePostgres &) = delete;

    bool isValid() const { return m_error.isEmpty() && m_server.isValid(); }
    QString error() const { return m_error; }
    const PostgresServer &server() const { return m_server; }
    QString directory() const { return m_dir.path(); } // the script's DIR argument

    // Keep the data directory and the port; empty string on success.
    QString stopServer();
    QString crashServer(); // pg_ctl -m immediate: the server dies as in a crash
    QString startServer();
    QString restartServer();

    // A streaming standby made from this server, which then commits synchronously to it
    // (postgres.sh start-standby); empty string on success, then standby() is valid.
    QString startStandby();
    QString promoteStandby(); // pg_ctl promote
    const PostgresServer &standby() const { return m_standby; }

private:
    QTemporaryDir m_dir;
    PostgresServer m_server;
    PostgresServer m_standby;
    QString m_error;
};

} // namespace cmq::test
