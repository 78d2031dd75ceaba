#pragma once
// The storage worker's view of its connection, shared by the per-area SQL files: literals per
// dialect and statement runners that check every result set. QPSQL binds values by formatting
// them into the statement text anyway (EXECUTE with literals, after a PREPARE round trip), so
// on PostgreSQL we format with the same driver escaping and send each job as one statement or
// one multi-statement script: one round trip. QPSQL reports a failure in a later statement of a
// script only when the caller walks to it, hence finish().

#include <memory>

#include <QDateTime>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QStringList>
#include <QVariant>

#include "dialect.h"
#include "libpq.h"
#include "util/result.h"

namespace cmq::storage {

class SqliteStatementCache;

class SqlSession
{
public:
    SqlSession() = default;
    // On an open connection: on PostgreSQL this is where libpq is looked up, once per
    // connection.
    SqlSession(QSqlDatabase db, const Dialect &dialect);

    QSqlDatabase &database() { return m_db; }
    // Closes the connection. Use this rather than database().close(): on SQLite it first
    // finalizes the statements kept prepared (sqliteStatements()), without which SQLite does not
    // close the connection.
    void close();
    // The statements SqliteRowStatement keeps prepared on this SQLite connection, shared by
    // copies of this session; null on PostgreSQL and when SQLite's API is not used.
    SqliteStatementCache *sqliteStatements();
    const Dialect &dialect() const { return *m_dialect; }

    // libpq behind this PostgreSQL connection, for the binary paths; null on SQLite, and on
    // PostgreSQL when libpq cannot be resolved or is switched off (then plain QtSql it is).
    const pq::Link *libpq() const { return m_libpq.connection ? &m_libpq : nullptr; }

    // A PostgreSQL connection that writes nothing but delivery updates and carries their
    // settings (updatesOnlySessionSettings() in deliverystore.h) for the whole session, set by
    // the worker that opened it; a copy of the session keeps the mark.
    void setUpdatesOnly() { m_updatesOnly = true; }
    bool updatesOnly() const { return m_updatesOnly; }

    // Server-side prepared statements live as long as the connection, and so does this session
    // object: the worker makes a new one for every (re)connect. Prepares `statement` as `name`
    // through libpq() unless this session did already.
    Status prepareOnce(const char *name, const char *statement);

    // SQL literals, escaped by the driver (never by hand). NUL characters, which no text column
    // can hold, become U+FFFD instead of silently cutting the statement short.
    QString text(const QString &value) const;
    QString bytes(const QByteArray &value) const;
    QString time(const QDateTime &value) const; // UTC, millisecond precision
    // The text of time(), unquoted: what SQLite's TEXT time columns hold, bound as a value.
    // Equal to QDateTime's ISODateWithMs in UTC; an invalid time gives an empty string.
    static QString isoTime(const QDateTime &value);
    static QString integer(qint64 value) { return QString::number(value); }
    QDateTime toTime(const QVariant &value) const;

    QSqlQuery newQuery(bool forwardOnly = true) const;
    // Runs `sql`; rows of the first result set can then be read from `query`. Call finish()
    // after reading them to surface errors from later statements or from the commit.
    Status run(QSqlQuery &query, const QString &sql) const;
    Status finish(QSqlQuery &query) const;
    Status exec(const QString &sql) const; // run + finish

    // All statements as one transaction: on PostgreSQL one round trip (a multi-statement simple
    // query is one implicit transaction), on SQLite BEGIN ... COMMIT, rolled back on failure.
    Status execTransaction(const QStringList &statements);

    Status begin();
    Status commit();
    void rollback();

    // One line for logs and replies: the driver's message without libpq's LINE/HINT details.
    static QString errorText(const QSqlError &error);

private:
    QSqlDatabase m_db;
    const Dialect *m_dialect = &sqliteDialect();
    pq::Link m_libpq;
    QSet<QByteArray> m_prepared;
    bool m_updatesOnly = false;
    std::shared_ptr<SqliteStatementCache> m_sqliteStatements; // SQLite only
};

} // namespace cmq::storage
