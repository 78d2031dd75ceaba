#pragma once
// What differs between the two databases, written once as data: the column types behind the
// schema's type tokens, how byte and time literals are spelled, how a connection is set up and
// how its multi-statement transactions and relaxed-durability writes are run. The SQL itself
// is shared; where a statement exists for one database only (fill factors, libpq's binary
// paths), the code says so at that place.

#include <QLatin1StringView>
#include <QSqlDatabase>
#include <QStringList>

namespace cmq::storage {

struct Dialect
{
    enum class Kind { Sqlite, Postgres };
    Kind kind;
    QLatin1StringView configName; // [database] driver
    QLatin1StringView qtDriver;   // QSqlDatabase driver name

    // The schema's type tokens, {time} and so on (see expand()).
    QLatin1StringView timeType;      // SQLite: ISO 8601 UTC text with ms, which sorts as time
    QLatin1StringView bytesType;     // {bytes}
    QLatin1StringView bigintType;    // {bigint}
    QLatin1StringView serialKeyType; // {serial}: "<type> PRIMARY KEY" that keeps insert order
    QLatin1StringView booleanType;   // {bool}
    QLatin1StringView falseLiteral;  // {false}

    // Literals: '<iso>'<timeSuffix>, <bytesPrefix><hex>'<bytesSuffix>.
    QLatin1StringView timeSuffix;
    QLatin1StringView bytesPrefix;
    QLatin1StringView bytesSuffix;

    // Run once on every new connection, in order.
    QStringList connectionSetup;

    // PostgreSQL runs a multi-statement script as one implicit transaction, in one round trip;
    // SQLite needs BEGIN ... COMMIT around the statements.
    bool scriptIsTransaction;
    // Several broker nodes may share the database (migrations then take a lock), and the
    // connection is a network link that can break (SQLite's errors are about the file).
    bool isServer;

    // Writes whose loss in a machine crash costs a redelivery only: statements that go first in
    // their transaction, and ones that go before and after it (outside any transaction).
    QStringList relaxedTransactionPrefix;
    QString relaxedBefore;
    QString relaxedAfter;

    bool isPostgres() const { return kind == Kind::Postgres; }

    // `sql` with its type tokens ({time}, {bytes}, {bigint}, {serial}, {bool}, {false})
    // replaced by this dialect's spelling.
    QString expand(QLatin1StringView sql) const;
};

const Dialect &postgresDialect();
const Dialect &sqliteDialect();

// By [database] driver name ("postgresql", "sqlite"); null for any other.
const Dialect *dialectNamed(const QString &configName);

// The dialect of an open connection, by its Qt driver (QPSQL or else SQLite).
const Dialect &dialectOf(const QSqlDatabase &db);

} // namespace cmq::storage
