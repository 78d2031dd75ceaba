#include "leaderlock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSqlQuery>

#include "connection.h"
#include "migrations.h"

namespace cmq::storage {

namespace {

// The advisory lock's key in its two-integer form: "CMQ" and 2 (the migration lock is the
// bigint 0x434d510001, which pg_locks shows with objsubid 1, so the two never meet).
constexpr int LockClass = 0x434d51;
constexpr int LockObject = 2;
// A takeover waits this long for the writes still in flight (the fence lock they hold, migration
// 16), then tries again.
constexpr int TakeoverLockWaitMs = 2000;

Result<LeaderRecord> readRow(SqlSession &session, const QString &expiredExpression)
{
    using R = Result<LeaderRecord>;
    QSqlQuery query = session.newQuery();
    Status st = session.run(
        query, QStringLiteral("SELECT epoch, node_id, client_address, since, ") +
                   expiredExpression + QStringLiteral(" FROM cluster_leader WHERE id = 1"));
    if (!st)
        return R::failure(st.error());
    if (!query.next())
        return R::failure(QStringLiteral("the cluster_leader row is missing"));
    LeaderRecord record;
    record.epoch = query.value(0).toLongLong();
    record.nodeId = query.value(1).toString();
    record.clientAddress = query.value(2).toString();
    record.since = query.isNull(3) ? QDateTime() : session.toTime(query.value(3));
    record.leaseExpired = query.value(4).toBool();
    if (st = session.finish(query); !st)
        return R::failure(st.error());
    return record;
}

QString takeOverStatement(const SqlSession &session, const QString &nodeId,
                          const QString &clientAddress, const QString &now)
{
    return QStringLiteral("UPDATE cluster_leader SET epoch = epoch + 1, node_id = %1, "
                          "client_address = %2, since = %3, renewed_at = %3 WHERE id = 1")
        .arg(session.text(nodeId), session.text(clientAddress), now);
}

class PostgresLeaderLock final : public LeaderLock
{
public:
    PostgresLeaderLock(const Config::Database &settings, const QString &connectionName)
        : m_settings(settings), m_name(connectionName)
    {
    }
    ~PostgresLeaderLock() override { close(); }

    Status open() override
    {
        close();
        Result<SqlSession> opened = openSession(m_settings, postgresDialect(), m_name,
                                                QStringLiteral("ciphermq-broker-leader"));
        if (!opened)
            return failure(opened.error());
        m_session = std::move(opened).value();
        if (Status st = migrate(m_session); !st) {
            close();
            return st;
        }
        return success();
    }

    bool isOpen() override { return m_session.database().isOpen(); }

    Result<bool> tryAcquire(int waitMs) override
    {
        if (waitMs <= 0) {
            QSqlQuery query = m_session.newQuery();
            if (Status st =
                    m_session.run(query, QStringLiteral("SELECT pg_try_advisory_lock(%1, %2)")
                                             .arg(LockClass)
                                             .arg(LockObject));
                !st)
                return Result<bool>::failure(st.error());
            const bool taken = query.next() && query.value(0).toBool();
            (void)m_session.finish(query);
            return taken;
        }
        // Waiting in the server hands the lock over the moment its holder lets go (SIGTERM,
        // or a killed process whose backend has noticed), without a polling delay.
        const Status taken = withLockTimeout(
            waitMs,
            QStringLiteral("SELECT pg_advisory_lock(%1, %2)").arg(LockClass).arg(LockObject));
        if (taken)
            return true;
        // A lock timeout leaves the connection usable; a lost link does not.
        if (!m_session.exec(QStringLiteral("SELECT 1")))
            return Result<bool>::failure(taken.error());
        return false;
    }

    Result<LeaderRecord> takeOver(const QString &nodeId, const QString &clientAddress) override
    {
        // The storage connections of a previous active (frozen, or cut off and not yet noticed
        // by the server) end first: one of them might sit in a transaction holding the row.
        // Should one reconnect, its writes fail on the epoch.
        if (Status st = m_session.exec(QStringLiteral(
                "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name = 'ciphermq-broker' "
                "AND pid <> pg_backend_pid()"));
            !st)
            return Result<LeaderRecord>::failure(st.error());
        if (Status st = withLockTimeout(
                TakeoverLockWaitMs,
                takeOverStatement(m_session, nodeId, clientAddress, QStringLiteral("now()")));
            !st)
            return Result<LeaderRecord>::failure(st.error());
        return readRow(m_session, QStringLiteral("false"));
    }

    Result<bool> renew(qint64 epoch) override
    {
        QSqlQuery query = m_session.newQuery();
        if (Status st =
                m_session.run(query, QStringLiteral("UPDATE cluster_leader SET renewed_at = now() "
                                                    "WHERE id = 1 AND epoch = %1")
                                         .arg(epoch));
            !st)
            return Result<bool>::failure(st.error());
        return query.numRowsAffected() == 1;
    }

    Result<LeaderRecord> read(int leaseMs) override
    {
        return readRow(m_session,
                       QStringLiteral("renewed_at IS NULL OR renewed_at < now() - interval '%1 "
                                      "milliseconds'")
                           .arg(leaseMs));
    }

    void evictHolder() override
    {
        (void)m_session.exec(
            QStringLiteral("SELECT pg_terminate_backend(pid, 5000) FROM pg_locks "
                           "WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid() "
                           "AND database = (SELECT oid FROM pg_database "
                           "WHERE datname = current_database()) "
                           "AND classid = %1 AND objid = %2 AND objsubid = 2")
                .arg(LockClass)
                .arg(LockObject));
    }

    void close() override { closeSession(m_session, m_name); }

private:
    Status withLockTimeout(int ms, const QString &sql)
    {
        if (Status st = m_session.exec(QStringLiteral("SET lock_timeout = %1").arg(ms)); !st)
            return st;
        const Status result = m_session.exec(sql);
        const Status reset = m_session.exec(QStringLiteral("SET lock_timeout = 0"));
        return result ? reset : result;
    }

    const Config::Database m_settings;
    const QString m_name;
    SqlSession m_session;
};

class SqliteLeaderLock final : public LeaderLock
{
public:
    SqliteLeaderLock(const Config::Database &settings, const QString &connectionName)
        : m_settings(settings), m_name(connectionName),
          m_lockPath(QFileInfo(settings.path).absoluteFilePath() + QStringLiteral(".lock"))
    {
    }
    ~SqliteLeaderLock() override { close(); }

    Status open() override { return success(); } // the file opens with the first attempt
    bool isOpen() override { return true; }

    Result<bool> tryAcquire(int) override
    {
        if (m_fd < 0) {
            const QFileInfo file(m_lockPath);
            if (!QDir().mkpath(file.absolutePath()))
                return Result<bool>::failure(
                    QStringLiteral("cannot create directory %1").arg(file.absolutePath()));
            m_fd = ::open(QFile::encodeName(m_lockPath).constData(), O_RDWR | O_CREAT | O_CLOEXEC,
                          0600);
            if (m_fd < 0)
                return Result<bool>::failure(
                    QStringLiteral("cannot open %1: %2").arg(m_lockPath, qt_error_string(errno)));
        }
        if (::flock(m_fd, LOCK_EX | LOCK_NB) == 0)
            return true;
        if (errno == EWOULDBLOCK)
            return false;
        return Result<bool>::failure(
            QStringLiteral("cannot lock %1: %2").arg(m_lockPath, qt_error_string(errno)));
    }

    Result<LeaderRecord> takeOver(const QString &nodeId, const QString &clientAddress) override
    {
        // Holding the file lock, this process alone migrates and writes.
        if (Status st = connect(); !st)
            return Result<LeaderRecord>::failure(st.error());
        if (Status st = migrate(m_session); !st)
            return Result<LeaderRecord>::failure(st.error());
        const QString now = m_session.time(QDateTime::currentDateTimeUtc());
        if (Status st = m_session.exec(takeOverStatement(m_session, nodeId, clientAddress, now));
            !st)
            return Result<LeaderRecord>::failure(st.error());
        Result<LeaderRecord> record = readRow(m_session, QStringLiteral("0"));
        closeSession(m_session, m_name); // the storage worker has the file from here on
        return record;
    }

    Result<bool> renew(qint64) override { return true; } // only our death releases the file

    Result<LeaderRecord> read(int) override
    {
        if (Status st = connect(); !st)
            return Result<LeaderRecord>::failure(st.error());
        return readRow(m_session, QStringLiteral("0"));
    }

    void evictHolder() override {}

    void close() override
    {
        closeSession(m_session, m_name);
        if (m_fd >= 0)
            ::close(m_fd); // releases the lock
        m_fd = -1;
    }

private:
    Status connect()
    {
        if (m_session.database().isOpen())
            return success();
        Result<SqlSession> opened = openSession(m_settings, sqliteDialect(), m_name, {});
        if (!opened)
            return failure(opened.error());
        m_session = std::move(opened).value();
        return success();
    }

    const Config::Database m_settings;
    const QString m_name;
    const QString m_lockPath;
    SqlSession m_session;
    int m_fd = -1;
};

} // namespace

std::unique_ptr<LeaderLock> makeLeaderLock(const Config::Database &settings,
                                           const QString &connectionName)
{
    if (settings.driver == QLatin1String("postgresql"))
        return std::make_unique<PostgresLeaderLock>(settings, connectionName);
    return std::make_unique<SqliteLeaderLock>(settings, connectionName);
}

} // namespace cmq::storage
