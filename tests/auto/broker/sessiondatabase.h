#pragma once
// A fresh database of either driver with a storage session on a connection of the test's own,
// for tests that call the storage functions directly (no worker thread): a SQLite file in a
// temporary directory, or a new database on the PostgreSQL fixture. "postgresql-qtsql" is
// PostgreSQL with libpq switched off, and "sqlite-qtsql" SQLite with SQLite's own API switched
// off, so the session takes the plain QtSql paths.

#include <memory>

#include <QSqlDatabase>
#include <QTemporaryDir>

#include "storage/libpq.h"
#include "storage/sqliteapi.h"
#include "storage/sqlsession.h"
#include "testpostgres.h"

namespace cmq::test {

class SessionDatabase
{
public:
    explicit SessionDatabase(const QString &driver) : m_postgres(driver.startsWith(u"postgresql"))
    {
        storage::pq::setEnabled(driver != u"postgresql-qtsql");
        storage::lite::setEnabled(driver != u"sqlite-qtsql");
        QSqlDatabase db;
        if (m_postgres) {
            m_pg = std::make_unique<TestDatabase>();
            if (!m_pg->isValid()) {
                m_error = m_pg->error();
                return;
            }
            db = m_pg->connection();
        } else {
            if (!m_dir.isValid()) {
                m_error = QStringLiteral("no temporary directory");
                return;
            }
            m_sqliteName = QStringLiteral("session-%1").arg(quintptr(this));
            db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_sqliteName);
            db.setDatabaseName(m_dir.filePath(QStringLiteral("ciphermq.db")));
            if (!db.open()) {
                m_error = QStringLiteral("cannot open the SQLite file");
                return;
            }
        }
        m_session = storage::SqlSession(db, storage::dialectOf(db));
    }
    ~SessionDatabase()
    {
        m_session = storage::SqlSession();
        if (!m_sqliteName.isEmpty()) {
            QSqlDatabase::database(m_sqliteName, false).close();
            QSqlDatabase::removeDatabase(m_sqliteName);
        }
        storage::pq::setEnabled(true);
        storage::lite::setEnabled(true);
    }
    SessionDatabase(const SessionDatabase &) = delete;
    SessionDatabase &operator=(const SessionDatabase &) = delete;

    QString error() const { return m_error; }
    bool isPostgres() const { return m_postgres; }
    storage::SqlSession &session() { return m_session; }

private:
    bool m_postgres;
    QTemporaryDir m_dir;
    std::unique_ptr<TestDatabase> m_pg;
    QString m_sqliteName;
    QString m_error;
    storage::SqlSession m_session;
};

} // namespace cmq::test
