#include "sqliteapi.h"

#include <atomic>
#include <utility>

#include <QSqlDriver>
#include <QSqlError>
#include <QVariant>

#include "loadedlibrary.h"
#include "sqlsession.h"
#include "storagelog.h"

namespace cmq::storage {

namespace lite {

namespace {

// SQLite's destructor constant (sqlite3.h; stable since SQLite 3.0).
const Destructor Static = nullptr; // the value outlives the binding (SqliteRowStatement holds it)

Api resolve(bool *ok)
{
    Api api{};
    LoadedLibrary library(QStringLiteral("sqlite3"), 0);
    auto get = [&](auto &function, const char *name) { library.get(function, name); };
    get(api.prepare, "sqlite3_prepare_v2");
    get(api.bindText, "sqlite3_bind_text");
    get(api.bindBlob, "sqlite3_bind_blob");
    get(api.bindInt64, "sqlite3_bind_int64");
    get(api.bindNull, "sqlite3_bind_null");
    get(api.step, "sqlite3_step");
    get(api.reset, "sqlite3_reset");
    get(api.clearBindings, "sqlite3_clear_bindings");
    get(api.finalize, "sqlite3_finalize");
    get(api.changes, "sqlite3_changes");
    get(api.errmsg, "sqlite3_errmsg");
    get(api.open, "sqlite3_open_v2");
    get(api.close, "sqlite3_close_v2");
    get(api.walCheckpoint, "sqlite3_wal_checkpoint_v2");
    get(api.walHook, "sqlite3_wal_hook");
    get(api.walAutocheckpoint, "sqlite3_wal_autocheckpoint");
    get(api.columnText, "sqlite3_column_text");
    *ok = library.ok();
    if (!*ok) {
        qCWarning(lcStorage).noquote()
            << "libsqlite3 not resolvable, binding SQLite values through QtSql:"
            << library.errorString();
    }
    return api;
}

std::atomic<bool> g_enabled{true};

} // namespace

const Api *api()
{
    return resolvedOnce<Api, resolve>(g_enabled);
}

void setEnabled(bool enabled)
{
    g_enabled = enabled;
}

Database *connectionOf(const QSqlDatabase &db)
{
    // The pattern QSqlDriver::handle() documents for QSQLITE.
    const QVariant handle = db.driver() ? db.driver()->handle() : QVariant();
    if (!handle.isValid() || qstrcmp(handle.typeName(), "sqlite3*") != 0)
        return nullptr;
    return *static_cast<Database *const *>(handle.constData());
}

} // namespace lite

lite::Statement *SqliteStatementCache::take(const QByteArray &sql)
{
    return m_kept.take(sql);
}

void SqliteStatementCache::give(const QByteArray &sql, lite::Statement *statement)
{
    m_api->reset(statement);
    // Its bindings point into the values the SqliteRowStatement held, which go with it.
    m_api->clearBindings(statement);
    lite::Statement *&slot = m_kept[sql];
    if (slot)
        m_api->finalize(statement); // two were in use at once; one is kept
    else
        slot = statement;
}

void SqliteStatementCache::clear()
{
    for (lite::Statement *statement : std::as_const(m_kept))
        m_api->finalize(statement);
    m_kept.clear();
}

SqliteRowStatement::~SqliteRowStatement()
{
    if (!m_statement)
        return;
    if (m_cache)
        m_cache->give(m_sql, m_statement);
    else
        m_api->finalize(m_statement);
}

Status SqliteRowStatement::prepare(SqlSession &session, const char *sql)
{
    if (SqliteStatementCache *cache = session.sqliteStatements()) {
        m_api = cache->api();
        m_db = cache->database();
        m_cache = cache;
        m_sql = QByteArray(sql);
        m_statement = cache->take(m_sql);
        if (m_statement)
            return success();
        if (m_api->prepare(m_db, sql, -1, &m_statement, nullptr) != lite::Ok) {
            m_statement = nullptr; // SQLite sets it to null on failure; finalize(null) is a no-op
            return failure(QString::fromUtf8(m_api->errmsg(m_db)));
        }
        return success();
    }
    m_query = session.newQuery();
    if (!m_query.prepare(QString::fromUtf8(sql)))
        return failure(SqlSession::errorText(m_query.lastError()));
    return success();
}

void SqliteRowStatement::hold(int index, QByteArray bytes)
{
    if (m_held.size() <= index)
        m_held.resize(index + 1);
    m_held[index] = std::move(bytes);
}

void SqliteRowStatement::bind(int index, const QString &text)
{
    if (!m_statement) {
        m_query.bindValue(index, text);
        return;
    }
    if (text.isNull()) {
        m_api->bindNull(m_statement, index + 1);
        return;
    }
    hold(index, text.toUtf8());
    const QByteArray &utf8 = m_held[index];
    m_api->bindText(m_statement, index + 1, utf8.constData(), int(utf8.size()), lite::Static);
}

void SqliteRowStatement::bind(int index, const QByteArray &bytes)
{
    if (!m_statement) {
        m_query.bindValue(index, bytes);
        return;
    }
    if (bytes.isNull()) {
        m_api->bindNull(m_statement, index + 1);
        return;
    }
    hold(index, bytes); // shares the data, copies nothing
    m_api->bindBlob(m_statement, index + 1, bytes.constData(), int(bytes.size()), lite::Static);
}

void SqliteRowStatement::bind(int index, qint64 value)
{
    if (!m_statement) {
        m_query.bindValue(index, value);
        return;
    }
    m_api->bindInt64(m_statement, index + 1, value);
}

bool SqliteRowStatement::exec()
{
    m_error.clear();
    if (!m_statement) {
        if (!m_query.exec()) {
            m_error = SqlSession::errorText(m_query.lastError());
            return false;
        }
        m_rowsAffected = m_query.numRowsAffected();
        return true;
    }
    int result = m_api->step(m_statement);
    while (result == lite::Row) // none of these statements returns rows; run it to its end
        result = m_api->step(m_statement);
    if (result != lite::Done)
        m_error = QString::fromUtf8(m_api->errmsg(m_db));
    m_rowsAffected = result == lite::Done ? m_api->changes(m_db) : 0;
    // Ready for the next row, and no longer a pending write when the transaction commits.
    m_api->reset(m_statement);
    return result == lite::Done;
}

qint64 SqliteRowStatement::rowsAffected() const
{
    return m_rowsAffected;
}

QString SqliteRowStatement::error() const
{
    return m_error;
}

} // namespace cmq::storage
