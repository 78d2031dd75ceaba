#include "connection.h"

#include <QDir>
#include <QFileInfo>
#include <QSqlError>
#include <QSqlQuery>

namespace cmq::storage {

Result<SqlSession> openSession(const Config::Database &settings, const Dialect &dialect,
                               const QString &connectionName, const QString &applicationName)
{
    using R = Result<SqlSession>;
    const QString driver = dialect.qtDriver;
    const QString where =
        dialect.isPostgres()
            ? QStringLiteral("cannot connect to PostgreSQL at %1:%2 as %3")
                  .arg(settings.host, QString::number(settings.port), settings.user)
            : QStringLiteral("cannot open SQLite database at %1").arg(settings.path);
    if (!QSqlDatabase::isDriverAvailable(driver))
        return R::failure(where +
                          QStringLiteral(": the Qt SQL driver %1 is not installed").arg(driver));

    QSqlDatabase db = QSqlDatabase::contains(connectionName)
                          ? QSqlDatabase::database(connectionName, false)
                          : QSqlDatabase::addDatabase(driver, connectionName);
    if (dialect.isPostgres()) {
        db.setHostName(settings.host);
        db.setPort(settings.port);
        db.setUserName(settings.user);
        db.setPassword(settings.password);
        db.setDatabaseName(settings.dbname);
        // Bounded connects, and keepalives so a vanished server host is noticed by a blocked
        // statement instead of hanging the worker for the kernel's default hours.
        db.setConnectOptions(
            QStringLiteral("connect_timeout=5;keepalives=1;keepalives_idle=10;"
                           "keepalives_interval=3;keepalives_count=3;application_name=") +
            applicationName);
    } else {
        const QFileInfo file(settings.path);
        if (!QDir().mkpath(file.absolutePath()))
            return R::failure(
                where + QStringLiteral(": cannot create directory %1").arg(file.absolutePath()));
        db.setDatabaseName(file.absoluteFilePath());
    }
    if (!db.open()) {
        const QString error = SqlSession::errorText(db.lastError()).simplified();
        db.close();
        return R::failure(where + QStringLiteral(": ") + error);
    }
    SqlSession session(db, dialect);

    for (const QString &sql : dialect.connectionSetup) {
        QSqlQuery query = session.newQuery();
        Status st = session.run(query, sql);
        if (st && sql.contains(u"journal_mode") &&
            (!query.next() || query.value(0).toString() != u"wal"))
            st = failure(QStringLiteral("cannot switch to WAL journal mode"));
        if (st)
            st = session.finish(query);
        if (!st) {
            query = QSqlQuery();
            session = SqlSession();
            db.close();
            return R::failure(where + QStringLiteral(": ") + st.error());
        }
    }
    return session;
}

void closeSession(SqlSession &session, const QString &connectionName)
{
    const bool had = session.database().isValid();
    if (had)
        session.database().close();
    // Every handle must be gone before removeDatabase(), or Qt warns that it is still in use.
    session = SqlSession();
    if (had || QSqlDatabase::contains(connectionName))
        QSqlDatabase::removeDatabase(connectionName);
}

} // namespace cmq::storage
