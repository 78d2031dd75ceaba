#include "connection.h"

#include <QDir>
#include <QFileInfo>
#include <QSqlError>
#include <QSqlQuery>

namespace cmq::storage {

namespace {

// "a:5432, b:5433" for messages, in the order libpq tries them.
QString describeServers(const Config::Database &settings)
{
    QStringList servers;
    for (qsizetype i = 0; i < settings.hosts.size(); ++i) {
        const quint16 port = settings.ports.value(settings.ports.size() == 1 ? 0 : i);
        servers.append(settings.hosts[i] + u':' + QString::number(port));
    }
    return servers.join(QStringLiteral(", "));
}

QString joinedPorts(const Config::Database &settings)
{
    QStringList ports;
    for (quint16 port : settings.ports)
        ports.append(QString::number(port));
    return ports.join(u',');
}

} // namespace

Result<SqlSession> openSession(const Config::Database &settings, const Dialect &dialect,
                               const QString &connectionName, const QString &applicationName)
{
    using R = Result<SqlSession>;
    const QString driver = dialect.qtDriver;
    const QString where =
        dialect.isPostgres()
            ? QStringLiteral("cannot connect to PostgreSQL at %1 as %2")
                  .arg(describeServers(settings), settings.user)
            : QStringLiteral("cannot open SQLite database at %1").arg(settings.path);
    if (!QSqlDatabase::isDriverAvailable(driver))
        return R::failure(where +
                          QStringLiteral(": the Qt SQL driver %1 is not installed").arg(driver));

    QSqlDatabase db = QSqlDatabase::contains(connectionName)
                          ? QSqlDatabase::database(connectionName, false)
                          : QSqlDatabase::addDatabase(driver, connectionName);
    if (dialect.isPostgres()) {
        // libpq's host list: tried in order, and only a server that accepts writes is kept, so
        // after a failover the promoted standby is found and the old primary, should it come
        // back as a standby, is passed over.
        db.setHostName(settings.hosts.join(u','));
        db.setPort(-1); // in the options: QPSQL's port is a single number
        db.setUserName(settings.user);
        db.setPassword(settings.password);
        db.setDatabaseName(settings.dbname);
        // Bounded connects, and keepalives so a vanished server host is noticed by a blocked
        // statement instead of hanging the worker for the kernel's default hours.
        db.setConnectOptions(
            QStringLiteral("port=%1;target_session_attrs=read-write;connect_timeout=5;keepalives=1;"
                           "keepalives_idle=10;keepalives_interval=3;keepalives_count=3;"
                           "application_name=%2")
                .arg(joinedPorts(settings), applicationName));
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
        session.close();
    // Every handle must be gone before removeDatabase(), or Qt warns that it is still in use.
    session = SqlSession();
    if (had || QSqlDatabase::contains(connectionName))
        QSqlDatabase::removeDatabase(connectionName);
}

} // namespace cmq::storage
