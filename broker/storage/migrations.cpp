#include "migrations.h"

#include <QSqlQuery>

#include "storagelog.h"

namespace cmq::storage {

namespace {

// Where a statement runs: both databases, or PostgreSQL only (SQLite then records the
// migration's number without doing anything).
enum class Runs { Everywhere, OnPostgresOnly };

struct Statement
{
    const char *sql; // with the dialect's type tokens, see Dialect::expand()
    Runs runs = Runs::Everywhere;
};

struct Migration
{
    int version;
    const char *description;
    QList<Statement> statements;
};

// Append new migrations at the end; never edit one that has shipped. SQLite keeps the text of
// every CREATE statement in its catalogue, so even the layout of a shipped one stays as it is
// (tst_StorageSchema compares both databases' catalogues with the shipped schema).
const QList<Migration> &migrations()
{
    static const QList<Migration> list = {
        {1,
         "initial schema: messages, queue entries, topology, public keys",
         {
             // {time}: TIMESTAMPTZ, or on SQLite ISO 8601 UTC text with milliseconds
             // ("2024-05-01T12:00:00.000Z"), which compares correctly as text.
             {R"(CREATE TABLE message_metadata (
                    message_id TEXT PRIMARY KEY,
                    client_id TEXT NOT NULL,
                    exchange TEXT NOT NULL,
                    routing_key TEXT NOT NULL,
                    sent_time {time} NOT NULL,
                    delivered_time {time},
                    acknowledged_time {time},
                    evicted_time {time},
                    status TEXT NOT NULL DEFAULT 'sent'
                        CHECK (status IN ('sent', 'delivered', 'acknowledged', 'evicted')),
                    commit_token {bigint}))"},
             {"CREATE INDEX message_metadata_sent_time ON message_metadata (sent_time)"},
             {R"(CREATE TABLE message_bodies (
                    message_id TEXT PRIMARY KEY,
                    envelope {bytes} NOT NULL))"},
             // {serial}: entry ids follow publish order, which recovery relies on.
             {R"(CREATE TABLE queue_entries (
                    id {serial} PRIMARY KEY,
                    queue TEXT NOT NULL,
                    message_id TEXT NOT NULL,
                    delivered {bool} NOT NULL DEFAULT {false},
                    UNIQUE (queue, message_id)))"},
             {"CREATE INDEX queue_entries_message_id ON queue_entries (message_id)"},
             {R"(CREATE TABLE exchanges (
                    name TEXT PRIMARY KEY,
                    type TEXT NOT NULL,
                    creator TEXT NOT NULL,
                    created_at {time} NOT NULL))"},
             {R"(CREATE TABLE queues (
                    name TEXT PRIMARY KEY,
                    owner TEXT NOT NULL,
                    max_length {bigint} NOT NULL DEFAULT 0,
                    overflow TEXT NOT NULL DEFAULT 'drop-head',
                    created_at {time} NOT NULL))"},
             {R"(CREATE TABLE bindings (
                    queue TEXT NOT NULL,
                    exchange TEXT NOT NULL,
                    routing_key TEXT NOT NULL,
                    PRIMARY KEY (queue, exchange, routing_key)))"},
             {R"(CREATE TABLE public_keys (
                    client_id TEXT PRIMARY KEY,
                    ciphertext TEXT NOT NULL,
                    nonce TEXT NOT NULL,
                    tag TEXT NOT NULL,
                    updated_at {time} NOT NULL))"},
         }},
        {2,
         "room for in-page updates of metadata and queue entries",
         // Every message's metadata row is updated when it is delivered and again when it is
         // acknowledged, and its queue entry once. With full pages each update is a new row
         // version plus new index entries; with room left, PostgreSQL updates in the page
         // (HOT) and leaves the indexes alone. SQLite has no fill factor.
         {
             {"ALTER TABLE message_metadata SET (fillfactor = 50)", Runs::OnPostgresOnly},
             {"ALTER TABLE queue_entries SET (fillfactor = 70)", Runs::OnPostgresOnly},
         }},
        {4,
         "per-queue message TTL",
         {
             {"ALTER TABLE queues ADD COLUMN message_ttl_ms {bigint} NOT NULL DEFAULT 0"},
         }},
    };
    return list;
}

QStringList statementsFor(const Migration &migration, const Dialect &dialect)
{
    QStringList statements;
    for (const Statement &statement : migration.statements) {
        if (statement.runs == Runs::Everywhere || dialect.isPostgres())
            statements << dialect.expand(QLatin1StringView(statement.sql));
    }
    return statements;
}

// Serializes migrations between broker nodes sharing one PostgreSQL database.
constexpr qint64 MigrationLockKey = 0x434d51'0001; // "CMQ" + 1

Status ensureVersionTable(SqlSession &session)
{
    return session.exec(
        session.dialect().expand(QLatin1StringView("CREATE TABLE IF NOT EXISTS schema_version ("
                                                   "version INTEGER PRIMARY KEY, "
                                                   "description TEXT NOT NULL, "
                                                   "applied_at {time} NOT NULL)")));
}

Status applyAll(SqlSession &session)
{
    if (Status st = ensureVersionTable(session); !st)
        return failure(QStringLiteral("cannot create schema_version: %1").arg(st.error()));

    const Result<int> current = currentSchemaVersion(session);
    if (!current)
        return failure(current.error());
    const int latest = latestSchemaVersion();
    if (current.value() > latest) {
        return failure(QStringLiteral("database schema version %1 is newer than this broker "
                                      "supports (%2); upgrade ciphermq-broker or point it at "
                                      "another database")
                           .arg(current.value())
                           .arg(latest));
    }

    for (const Migration &migration : migrations()) {
        if (migration.version <= current.value())
            continue;
        QStringList statements = statementsFor(migration, session.dialect());
        statements << QStringLiteral("INSERT INTO schema_version (version, description, "
                                     "applied_at) VALUES (%1, %2, %3)")
                          .arg(migration.version)
                          .arg(session.text(QString::fromUtf8(migration.description)),
                               session.time(QDateTime::currentDateTimeUtc()));
        if (Status st = session.execTransaction(statements); !st) {
            return failure(QStringLiteral("schema migration %1 (%2) failed: %3")
                               .arg(migration.version)
                               .arg(QString::fromUtf8(migration.description), st.error()));
        }
        qCInfo(lcStorage, "applied schema migration %d: %s", migration.version,
               migration.description);
    }
    return success();
}

} // namespace

int latestSchemaVersion()
{
    return migrations().constLast().version;
}

Result<int> currentSchemaVersion(SqlSession &session)
{
    QSqlQuery query = session.newQuery();
    Status st = session.run(query, QStringLiteral("SELECT COALESCE(MAX(version), 0) "
                                                  "FROM schema_version"));
    if (!st)
        return Result<int>::failure(
            QStringLiteral("cannot read schema_version: %1").arg(st.error()));
    const int version = query.next() ? query.value(0).toInt() : 0;
    if (st = session.finish(query); !st)
        return Result<int>::failure(
            QStringLiteral("cannot read schema_version: %1").arg(st.error()));
    return version;
}

Status migrate(SqlSession &session)
{
    if (!session.dialect().isServer)
        return applyAll(session); // one process owns the SQLite file

    const QString key = QString::number(MigrationLockKey);
    if (Status st = session.exec(QStringLiteral("SELECT pg_advisory_lock(%1)").arg(key)); !st)
        return failure(QStringLiteral("cannot take the migration lock: %1").arg(st.error()));
    const Status result = applyAll(session);
    if (Status st = session.exec(QStringLiteral("SELECT pg_advisory_unlock(%1)").arg(key)); !st)
        qCWarning(lcStorage) << "cannot release the migration lock:" << st.error();
    return result;
}

} // namespace cmq::storage
