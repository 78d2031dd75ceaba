#pragma once
// Opening a database connection as [database] describes it, shared by the storage worker and
// the leader election (each has connections of its own, on its own thread).

#include <QString>

#include "config/config.h"
#include "dialect.h"
#include "sqlsession.h"
#include "util/result.h"

namespace cmq::storage {

// Opens (or reopens) the QSqlDatabase named `connectionName` and runs the dialect's connection
// setup. `applicationName` tells the PostgreSQL connections of a broker apart (pg_stat_activity).
// The error says where it tried to connect.
Result<SqlSession> openSession(const Config::Database &settings, const Dialect &dialect,
                               const QString &connectionName, const QString &applicationName);

// Closes the connection and forgets its name; every handle of `session` goes first.
void closeSession(SqlSession &session, const QString &connectionName);

} // namespace cmq::storage
