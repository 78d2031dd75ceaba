#include "dialect.h"

namespace cmq::storage {

using namespace Qt::StringLiterals;

const Dialect &postgresDialect()
{
    static const Dialect dialect{
        .kind = Dialect::Kind::Postgres,
        .configName = "postgresql"_L1,
        .qtDriver = "QPSQL"_L1,
        .timeType = "TIMESTAMPTZ"_L1,
        .bytesType = "BYTEA"_L1,
        .bigintType = "BIGINT"_L1,
        .serialKeyType = "BIGSERIAL"_L1,
        .booleanType = "BOOLEAN"_L1,
        .falseLiteral = "FALSE"_L1,
        .timeSuffix = "::timestamptz"_L1,
        // Hex is unambiguous in both dialects and independent of standard_conforming_strings.
        .bytesPrefix = "'\\x"_L1,
        .bytesSuffix = "::bytea"_L1,
        .connectionSetup =
            {
                // An ACK means durable: a server or role default of off/local must not relax
                // that for this session (stronger settings such as remote_apply are kept).
                u"DO $$ BEGIN IF current_setting('synchronous_commit') IN ('off', 'local') "
                "THEN SET synchronous_commit TO on; END IF; END $$"_s,
                // libpq prints server notices ("already exists, skipping") on stderr otherwise.
                u"SET client_min_messages TO warning"_s,
                // Every statement the broker sends is short and run once per batch or page; a
                // plan costed above jit_above_cost (a large backlog, enable_seqscan off) was
                // compiled by LLVM at each execution: 71% of the backend's CPU in a backlog
                // drain (bench/README.md, "The drain's server CPU was JIT compilation").
                u"SET jit TO off"_s,
            },
        .scriptIsTransaction = true,
        .isServer = true,
        .relaxedTransactionPrefix = {u"SET LOCAL synchronous_commit TO off"_s},
        .relaxedBefore = {},
        .relaxedAfter = {},
    };
    return dialect;
}

const Dialect &sqliteDialect()
{
    static const Dialect dialect{
        .kind = Dialect::Kind::Sqlite,
        .configName = "sqlite"_L1,
        .qtDriver = "QSQLITE"_L1,
        .timeType = "TEXT"_L1,
        .bytesType = "BLOB"_L1,
        .bigintType = "INTEGER"_L1,
        // The rowid: always above every existing row, so it keeps insert order without
        // AUTOINCREMENT's extra bookkeeping.
        .serialKeyType = "INTEGER"_L1,
        .booleanType = "INTEGER"_L1,
        .falseLiteral = "0"_L1,
        .timeSuffix = {},
        .bytesPrefix = "X'"_L1,
        .bytesSuffix = {},
        .connectionSetup =
            {
                // WAL + FULL: a committed batch is on disk before the publisher hears ACK.
                u"PRAGMA journal_mode=WAL"_s,
                u"PRAGMA synchronous=FULL"_s,
                // Debian builds SQLite with secure_delete ON: a page that falls free (the
                // front of a queue once its entries are acknowledged) is zeroed and written to
                // the log again. FAST still zeroes deleted rows inside pages that are written
                // anyway, but leaves freed pages alone until reused: a quarter fewer bytes
                // written per message at W=256 (bench/README.md, "SQLite: freed pages not
                // rewritten"). The envelopes are ciphertext the broker cannot read either way.
                u"PRAGMA secure_delete=FAST"_s,
                u"PRAGMA foreign_keys=ON"_s,
                u"PRAGMA busy_timeout=5000"_s,
                // A checkpoint runs inside the commit that takes the log past this many pages,
                // copying them into the database file and syncing it while publishers wait.
                // 10,000 pages (40 MB) instead of 1,000: a queue's pages are written over and
                // over, so fewer, larger checkpoints copy each page once for many commits
                // (bench/README.md, "SQLite: checkpoints ten times rarer").
                u"PRAGMA wal_autocheckpoint=10000"_s,
            },
        .scriptIsTransaction = false,
        .isServer = false,
        .relaxedTransactionPrefix = {},
        // Not allowed inside a transaction.
        .relaxedBefore = u"PRAGMA synchronous=NORMAL"_s,
        .relaxedAfter = u"PRAGMA synchronous=FULL"_s,
    };
    return dialect;
}

const Dialect *dialectNamed(const QString &configName)
{
    for (const Dialect *dialect : {&postgresDialect(), &sqliteDialect()}) {
        if (configName == dialect->configName)
            return dialect;
    }
    return nullptr;
}

const Dialect &dialectOf(const QSqlDatabase &db)
{
    return db.driverName() == postgresDialect().qtDriver ? postgresDialect() : sqliteDialect();
}

QString Dialect::expand(QLatin1StringView sql) const
{
    const std::pair<QLatin1StringView, QLatin1StringView> tokens[] = {
        {"{time}"_L1, timeType},        {"{bytes}"_L1, bytesType},  {"{bigint}"_L1, bigintType},
        {"{serial}"_L1, serialKeyType}, {"{bool}"_L1, booleanType}, {"{false}"_L1, falseLiteral},
    };
    QString out = sql;
    for (const auto &[token, value] : tokens)
        out.replace(token, value);
    return out;
}

} // namespace cmq::storage
