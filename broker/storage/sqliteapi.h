#pragma once
// The few SQLite calls the SQLite publish and delivery-update paths make themselves, on the
// connection QSQLITE opened: statements prepared once per connection (SqliteStatementCache) and
// run a row at a time, with values bound natively. Through QtSql each value went through a
// QVariant, a QString converted to UTF-16 for SQLite to convert back, and QSqlResult's bookkeeping:
// about a tenth of the storage thread at W=256 (bench/README.md, "SQLite: values bound through
// SQLite's own API"). Resolved at run time from the libsqlite3 that the QSQLITE plugin has loaded,
// as libpq.h does for libpq, so the broker needs neither SQLite's headers nor a link dependency of
// its own.

#include <QByteArray>
#include <QHash>
#include <QSqlQuery>
#include <QString>
#include <QVarLengthArray>

#include "util/result.h"

namespace cmq::storage {

class SqlSession;

namespace lite {

struct Database;  // SQLite's sqlite3
struct Statement; // SQLite's sqlite3_stmt
using Destructor = void (*)(void *);

// sqlite3.h's constants used here (stable since SQLite 3.7).
constexpr int Ok = 0;
constexpr int Row = 100;
constexpr int Done = 101;
constexpr int OpenReadWrite = 0x00000002;
constexpr int CheckpointPassive = 0;

// SQLite's C API (libsqlite3.so.0), the calls used here.
struct Api
{
    int (*prepare)(Database *, const char *sql, int bytes, Statement **, const char **tail);
    int (*bindText)(Statement *, int index, const char *utf8, int bytes, Destructor);
    int (*bindBlob)(Statement *, int index, const void *data, int bytes, Destructor);
    int (*bindInt64)(Statement *, int index, long long value);
    int (*bindNull)(Statement *, int index);
    int (*step)(Statement *);
    int (*reset)(Statement *);
    int (*clearBindings)(Statement *);
    int (*finalize)(Statement *);
    int (*changes)(Database *);
    const char *(*errmsg)(Database *);
    // For the log's checkpoints on a connection of their own (sqlitecheckpointer.h).
    int (*open)(const char *path, Database **, int flags, const char *vfs);
    int (*close)(Database *);
    int (*walCheckpoint)(Database *, const char *schema, int mode, int *logFrames,
                         int *checkpointedFrames);
    void *(*walHook)(Database *, int (*)(void *, Database *, const char *schema, int pages),
                     void *);
    int (*walAutocheckpoint)(Database *, int pages);
    const char *(*columnText)(Statement *, int column);
};

// Null when libsqlite3 cannot be resolved or is switched off; callers then use QtSql.
const Api *api();

// On by default. Tests switch it off to exercise the QtSql fallback.
void setEnabled(bool enabled);

// The sqlite3 behind an open QSQLITE connection, or null.
Database *connectionOf(const QSqlDatabase &db);

} // namespace lite

// The statements SqliteRowStatement prepared on one SQLite connection, kept for the life of the
// connection: preparing (parsing and planning) the publish and delivery-update statements again
// for every batch was a fifth of the storage thread's CPU at W=1, where a batch is one message
// (bench/README.md, "SQLite: statements prepared once per connection"). SQLite re-prepares a
// kept statement by itself should the schema change. All of them must be finalized before the
// connection closes (SQLite will not close a connection with statements left): SqlSession::close()
// does that.
class SqliteStatementCache
{
public:
    SqliteStatementCache() = default;
    ~SqliteStatementCache() { clear(); }
    SqliteStatementCache(const SqliteStatementCache &) = delete;
    SqliteStatementCache &operator=(const SqliteStatementCache &) = delete;

    // The connection it keeps statements for, set once on first use.
    void attach(const lite::Api *api, lite::Database *db)
    {
        m_api = api;
        m_db = db;
    }
    bool isAttached() const { return m_db != nullptr; }
    const lite::Api *api() const { return m_api; }
    lite::Database *database() const { return m_db; }
    // The kept statement for `sql`, now the caller's, or null when none is kept (or it is in use).
    lite::Statement *take(const QByteArray &sql);
    // Back from the caller, reset and without bindings; finalized if one is kept already.
    void give(const QByteArray &sql, lite::Statement *statement);
    // Finalizes every kept statement.
    void clear();
    qsizetype size() const { return m_kept.size(); }

private:
    const lite::Api *m_api = nullptr;
    lite::Database *m_db = nullptr;
    QHash<QByteArray, lite::Statement *> m_kept;
};

// One prepared statement on a SQLite session, run a row at a time: through SQLite's own API
// when lite::api() has it, else through QtSql. Indexes count from 0, as QSqlQuery's do.
class SqliteRowStatement
{
public:
    SqliteRowStatement() = default;
    ~SqliteRowStatement();
    SqliteRowStatement(const SqliteRowStatement &) = delete;
    SqliteRowStatement &operator=(const SqliteRowStatement &) = delete;

    Status prepare(SqlSession &session, const char *sql);
    void bind(int index, const QString &text);     // a null string binds NULL
    void bind(int index, const QByteArray &bytes); // a blob; a null array binds NULL
    void bind(int index, qint64 value);
    // Runs the statement with the values bound last; false with error() set otherwise.
    bool exec();
    // Rows the last exec() inserted, updated or deleted.
    qint64 rowsAffected() const;
    QString error() const;

private:
    void hold(int index, QByteArray bytes);

    const lite::Api *m_api = nullptr;
    lite::Database *m_db = nullptr;
    lite::Statement *m_statement = nullptr;
    SqliteStatementCache *m_cache = nullptr; // where m_statement goes back to
    QByteArray m_sql;
    QVarLengthArray<QByteArray, 8> m_held; // the bound text and blobs, until bound again
    qint64 m_rowsAffected = 0;
    QString m_error;
    QSqlQuery m_query; // the QtSql fallback
};

} // namespace cmq::storage
