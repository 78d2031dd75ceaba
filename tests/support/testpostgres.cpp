#include "testpostgres.h"

#include <atomic>
#include <utility>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QSqlError>
#include <QSqlQuery>

namespace cmq::test {

namespace {

PostgresServer parseConnection(const QString &dir, QString *error,
                               const QString &fileName = QStringLiteral("connection"))
{
    QFile file(QDir(dir).absoluteFilePath(fileName));
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("no PostgreSQL fixture at %1 (run the tests through ctest)")
                     .arg(file.fileName());
        return {};
    }
    const QString line = QString::fromUtf8(file.readAll()).trimmed();
    PostgresServer server;
    const QRegularExpression pair(QStringLiteral("(\\w+)=(\\S+)"));
    for (auto it = pair.globalMatch(line); it.hasNext();) {
        const auto match = it.next();
        if (match.captured(1) == u"host")
            server.host = match.captured(2);
        else if (match.captured(1) == u"port")
            server.port = match.captured(2).toUShort();
        else if (match.captured(1) == u"user")
            server.user = match.captured(2);
    }
    if (!server.isValid())
        *error = QStringLiteral("cannot parse %1: %2").arg(file.fileName(), line);
    return server;
}

QString uniqueName(const QString &prefix)
{
    static std::atomic<int> counter{0};
    return QStringLiteral("%1_%2_%3_%4")
        .arg(prefix)
        .arg(QCoreApplication::applicationPid())
        .arg(counter.fetch_add(1))
        .arg(QRandomGenerator::global()->bounded(1 << 30), 0, 36);
}

// Runs one statement on the server's maintenance database with a short-lived connection.
QString adminExec(const PostgresServer &server, const QString &sql)
{
    const QString name = uniqueName(QStringLiteral("admin"));
    QString error;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), name);
        db.setHostName(server.host);
        db.setPort(server.port);
        db.setUserName(server.user);
        db.setDatabaseName(QStringLiteral("postgres"));
        if (!db.open()) {
            error = db.lastError().text();
        } else {
            QSqlQuery query(db);
            if (!query.exec(sql))
                error = query.lastError().text();
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return error;
}

} // namespace

PostgresServer fixturePostgres(QString *error)
{
    const QByteArray dir = qgetenv("CMQ_TEST_POSTGRES");
    if (dir.isEmpty()) {
        *error = QStringLiteral("CMQ_TEST_POSTGRES is not set: run the tests through ctest");
        return {};
    }
    return parseConnection(QString::fromLocal8Bit(dir), error);
}

QString postgresScriptPath()
{
    return QStringLiteral(CMQ_POSTGRES_SCRIPT);
}

QString runPostgresScript(const QString &action, const QString &dir)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(QStringLiteral("bash"), {postgresScriptPath(), action, dir});
    if (!process.waitForFinished(180 * 1000)) {
        process.kill();
        process.waitForFinished();
        return QStringLiteral("postgres.sh %1 timed out").arg(action);
    }
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        return QStringLiteral("postgres.sh %1 failed: %2")
            .arg(action, QString::fromLocal8Bit(process.readAll()));
    }
    return {};
}

TestDatabase::TestDatabase(const PostgresServer &server)
    : m_server(server), m_name(uniqueName(QStringLiteral("cmq_test")))
{
    m_error = adminExec(m_server, QStringLiteral("CREATE DATABASE %1").arg(m_name));
}

TestDatabase::TestDatabase() : m_name(uniqueName(QStringLiteral("cmq_test")))
{
    m_server = fixturePostgres(&m_error);
    if (m_server.isValid())
        m_error = adminExec(m_server, QStringLiteral("CREATE DATABASE %1").arg(m_name));
}

TestDatabase::~TestDatabase()
{
    if (!m_connectionName.isEmpty()) {
        QSqlDatabase::database(m_connectionName, false).close();
        QSqlDatabase::removeDatabase(m_connectionName);
    }
    if (m_error.isEmpty()) {
        const QString error = adminExec(
            m_server, QStringLiteral("DROP DATABASE IF EXISTS %1 WITH (FORCE)").arg(m_name));
        if (!error.isEmpty())
            qWarning("cannot drop test database %s: %s", qPrintable(m_name), qPrintable(error));
    }
}

QSqlDatabase TestDatabase::connection()
{
    if (m_connectionName.isEmpty()) {
        m_connectionName = uniqueName(QStringLiteral("check"));
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), m_connectionName);
        db.setHostName(m_server.host);
        db.setPort(m_server.port);
        db.setUserName(m_server.user);
        db.setDatabaseName(m_name);
    }
    QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
    if (!db.isOpen() && !db.open())
        qWarning("cannot open %s: %s", qPrintable(m_name), qPrintable(db.lastError().text()));
    return db;
}

PrivatePostgres::PrivatePostgres()
{
    if (!m_dir.isValid()) {
        m_error = QStringLiteral("cannot create a temporary directory");
        return;
    }
    m_error = runPostgresScript(QStringLiteral("start"), m_dir.path());
    if (m_error.isEmpty())
        m_server = parseConnection(m_dir.path(), &m_error);
}

PrivatePostgres::~PrivatePostgres()
{
    if (m_dir.isValid()) {
        const QString error = runPostgresScript(QStringLiteral("stop"), m_dir.path());
        if (!error.isEmpty())
            qWarning("%s", qPrintable(error));
    }
}

QString PrivatePostgres::stopServer()
{
    return runPostgresScript(QStringLiteral("stop-server"), m_dir.path());
}

QString PrivatePostgres::crashServer()
{
    return runPostgresScript(QStringLiteral("crash-server"), m_dir.path());
}

QString PrivatePostgres::startServer()
{
    return runPostgresScript(QStringLiteral("start-server"), m_dir.path());
}

QString PrivatePostgres::restartServer()
{
    return runPostgresScript(QStringLiteral("restart"), m_dir.path());
}

QString PrivatePostgres::startStandby()
{
    QString error = runPostgresScript(QStringLiteral("start-standby"), m_dir.path());
    if (error.isEmpty())
        m_standby = parseConnection(m_dir.path(), &error, QStringLiteral("standby-connection"));
    return error;
}

QString PrivatePostgres::promoteStandby()
{
    return runPostgresScript(QStringLiteral("promote-standby"), m_dir.path());
}

TableLock::TableLock(TestDatabase &database, const QString &table)
    : m_connection(database.connection())
{
    if (!m_connection.transaction()) {
        m_error = m_connection.lastError().text();
        return;
    }
    QSqlQuery query(m_connection);
    if (!query.exec(QStringLiteral("LOCK TABLE %1 IN EXCLUSIVE MODE").arg(table))) {
        m_error = query.lastError().text();
        m_connection.rollback();
        return;
    }
    m_held = true;
}

TableLock::~TableLock()
{
    release();
}

bool TableLock::release()
{
    return !std::exchange(m_held, false) || m_connection.commit();
}

} // namespace cmq::test
