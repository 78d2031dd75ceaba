#include "migrations.h"

#include <QSqlQuery>

#include "storagelog.h"

namespace cmq::storage {

namespace {

// Where a statement runs: both databases, or one of them only (a migration whose statements
// all belong to the other database only records its number).
enum class Runs { Everywhere, OnPostgresOnly, OnSqliteOnly };

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
        {3,
         "cluster leadership: the leader row and its fencing epoch",
         // One row: the active node and its epoch, bumped by every takeover. On PostgreSQL a
         // statement trigger on every table the broker writes checks, within the writing
         // transaction, that a connection which declared an epoch (ciphermq.epoch) still holds
         // the current one, and keeps the row locked FOR SHARE until that transaction ends, so
         // a takeover waits for it and a deposed node can commit nothing afterwards
         // (docs/STORAGE.md). Connections that declare no epoch (migrations, operators) pass.
         {
             {R"(CREATE TABLE cluster_leader (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    epoch {bigint} NOT NULL,
                    node_id TEXT NOT NULL,
                    client_address TEXT NOT NULL,
                    since {time},
                    renewed_at {time}))"},
             {"INSERT INTO cluster_leader (id, epoch, node_id, client_address) "
              "VALUES (1, 0, '', '')"},
             {R"(CREATE FUNCTION ciphermq_check_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    declared TEXT := current_setting('ciphermq.epoch', true);
                BEGIN
                    IF declared IS NULL OR declared = '' THEN
                        RETURN NULL;
                    END IF;
                    PERFORM 1 FROM cluster_leader WHERE id = 1 AND epoch = declared::BIGINT
                        FOR SHARE;
                    IF NOT FOUND THEN
                        RAISE EXCEPTION 'fenced: leadership epoch % is no longer current, '
                            'another node is active', declared;
                    END IF;
                    RETURN NULL;
                END $$)",
              Runs::OnPostgresOnly},
             {"CREATE TRIGGER ciphermq_fence BEFORE INSERT OR UPDATE OR DELETE ON message_metadata "
              "FOR EACH STATEMENT EXECUTE FUNCTION ciphermq_check_epoch()",
              Runs::OnPostgresOnly},
             {"CREATE TRIGGER ciphermq_fence BEFORE INSERT OR UPDATE OR DELETE ON message_bodies "
              "FOR EACH STATEMENT EXECUTE FUNCTION ciphermq_check_epoch()",
              Runs::OnPostgresOnly},
             {"CREATE TRIGGER ciphermq_fence BEFORE INSERT OR UPDATE OR DELETE ON queue_entries "
              "FOR EACH STATEMENT EXECUTE FUNCTION ciphermq_check_epoch()",
              Runs::OnPostgresOnly},
             {"CREATE TRIGGER ciphermq_fence BEFORE INSERT OR UPDATE OR DELETE ON exchanges "
              "FOR EACH STATEMENT EXECUTE FUNCTION ciphermq_check_epoch()",
              Runs::OnPostgresOnly},
             {"CREATE TRIGGER ciphermq_fence BEFORE INSERT OR UPDATE OR DELETE ON queues "
              "FOR EACH STATEMENT EXECUTE FUNCTION ciphermq_check_epoch()",
              Runs::OnPostgresOnly},
             {"CREATE TRIGGER ciphermq_fence BEFORE INSERT OR UPDATE OR DELETE ON bindings "
              "FOR EACH STATEMENT EXECUTE FUNCTION ciphermq_check_epoch()",
              Runs::OnPostgresOnly},
             {"CREATE TRIGGER ciphermq_fence BEFORE INSERT OR UPDATE OR DELETE ON public_keys "
              "FOR EACH STATEMENT EXECUTE FUNCTION ciphermq_check_epoch()",
              Runs::OnPostgresOnly},
         }},
        {4,
         "per-queue message TTL",
         {
             {"ALTER TABLE queues ADD COLUMN message_ttl_ms {bigint} NOT NULL DEFAULT 0"},
         }},
        {5,
         "admin audit trail",
         // The id is the broker's, so its ring and this table agree (storage/auditstore.cpp).
         {
             {R"(CREATE TABLE admin_audit (
                    id {bigint} PRIMARY KEY,
                    at {time} NOT NULL,
                    cn TEXT NOT NULL,
                    remote_address TEXT NOT NULL,
                    action TEXT NOT NULL,
                    target TEXT NOT NULL,
                    result TEXT NOT NULL,
                    detail TEXT NOT NULL))"},
         }},
        {6,
         "dead-lettering: per-queue dead-letter exchange and delivery limit, dead-letter records",
         // A dead letter is an ordinary queue entry of the dead-letter queue; its record (why,
         // from where) sits beside it, keyed like the entry, and moves with it in one
         // transaction (storage/deadletterstore.cpp). dead_letter_overflow: 1 when drop-head
         // evictions are dead-lettered too.
         {
             {"ALTER TABLE queues ADD COLUMN dead_letter_exchange TEXT NOT NULL DEFAULT ''"},
             {"ALTER TABLE queues ADD COLUMN dead_letter_routing_key TEXT NOT NULL DEFAULT ''"},
             {"ALTER TABLE queues ADD COLUMN delivery_limit {bigint} NOT NULL DEFAULT 0"},
             {"ALTER TABLE queues ADD COLUMN dead_letter_overflow {bigint} NOT NULL DEFAULT 0"},
             {R"(CREATE TABLE dead_letters (
                    queue TEXT NOT NULL,
                    message_id TEXT NOT NULL,
                    reason TEXT NOT NULL
                        CHECK (reason IN ('rejected', 'expired', 'overflow', 'delivery_limit')),
                    original_queue TEXT NOT NULL,
                    dead_lettered_at {time} NOT NULL,
                    delivery_count {bigint} NOT NULL,
                    PRIMARY KEY (queue, message_id)))"},
             {"CREATE TRIGGER ciphermq_fence BEFORE INSERT OR UPDATE OR DELETE ON dead_letters "
              "FOR EACH STATEMENT EXECUTE FUNCTION ciphermq_check_epoch()",
              Runs::OnPostgresOnly},
         }},
        {10,
         "queue entries by queue in publish order",
         // Pages of one queue in its order: a queue's backlog read back while consumers drain it
         // (storage/backlogstore.cpp) and the admin listing of its messages
         // (storage/messagelisting.cpp). "WHERE queue = ? AND id > ? ORDER BY id LIMIT n" is a
         // short range scan of this index, however long the queue and however many others.
         {
             {"CREATE INDEX queue_entries_queue_id ON queue_entries (queue, id)"},
         }},
        {11,
         "queue entries: one unique index on (message_id, queue) instead of two",
         // Every queue entry had four index entries: id, UNIQUE (queue, message_id), message_id
         // and (queue, id). Lookups by message id (envelope clean-up, retention, the resend
         // check) and by (queue, message id) (ack, evict, dead-letter moves and their
         // ON CONFLICT, which matches a unique index by its set of columns) are all served by
         // one unique index on (message_id, queue): one index entry less per message written
         // and deleted (bench/README.md, "Where the time goes"). SQLite cannot drop a
         // table's UNIQUE constraint, so there the table is rebuilt (ids kept).
         {
             {"ALTER TABLE queue_entries RENAME TO queue_entries_before_11", Runs::OnSqliteOnly},
             {R"(CREATE TABLE queue_entries (
                    id {serial} PRIMARY KEY,
                    queue TEXT NOT NULL,
                    message_id TEXT NOT NULL,
                    delivered {bool} NOT NULL DEFAULT {false}))",
              Runs::OnSqliteOnly},
             {"INSERT INTO queue_entries (id, queue, message_id, delivered) "
              "SELECT id, queue, message_id, delivered FROM queue_entries_before_11",
              Runs::OnSqliteOnly},
             {"DROP TABLE queue_entries_before_11", Runs::OnSqliteOnly},
             {"CREATE INDEX queue_entries_queue_id ON queue_entries (queue, id)",
              Runs::OnSqliteOnly},
             {"CREATE UNIQUE INDEX queue_entries_message_queue ON queue_entries (message_id, queue)"},
             {"ALTER TABLE queue_entries DROP CONSTRAINT queue_entries_queue_message_id_key",
              Runs::OnPostgresOnly},
             {"DROP INDEX queue_entries_message_id", Runs::OnPostgresOnly},
         }},
        {12,
         "PostgreSQL: metadata sent times indexed by block range",
         // sent_time is read by the hourly retention purge alone, and metadata rows are written
         // in about sent-time order: a BRIN index (a summary per 128 pages) narrows the purge
         // like the B-tree did, without a B-tree insert per message. autosummarize: new ranges
         // are summarized soon, not only by VACUUM (an unsummarized range is always read, so the
         // purge finds the same rows either way). SQLite keeps its B-tree; it has no BRIN.
         {
             {"CREATE INDEX message_metadata_sent_time_brin ON message_metadata "
              "USING brin (sent_time) WITH (autosummarize = on)",
              Runs::OnPostgresOnly},
             {"DROP INDEX message_metadata_sent_time", Runs::OnPostgresOnly},
         }},
        {13,
         "PostgreSQL: queue entries keyed by (queue, id)",
         // The primary key on id alone was one more index entry per queue entry, and no
         // statement the broker sends looks an entry up by id alone: every read is a range of
         // one queue in id order (the backlog pages, queue_messages), which (queue, id) serves.
         // So (queue, id) becomes the key and its separate index of migration 10 goes. On SQLite
         // id is the rowid and costs no index entry, so nothing changes there.
         {
             {"ALTER TABLE queue_entries DROP CONSTRAINT queue_entries_pkey",
              Runs::OnPostgresOnly},
             {"ALTER TABLE queue_entries ADD CONSTRAINT queue_entries_pkey PRIMARY KEY (queue, id)",
              Runs::OnPostgresOnly},
             {"DROP INDEX queue_entries_queue_id", Runs::OnPostgresOnly},
         }},
        {14,
         "queue entries: the envelope of a message held by one queue",
         // Most messages are routed to exactly one queue: their envelope is written in the queue
         // entry, and message_bodies keeps only envelopes shared by several entries (one row, its
         // key and its delete less per message; bench/README.md, "Where the time goes"). An entry
         // reads COALESCE(envelope, its message_bodies row), so rows written before this
         // migration (envelope NULL) need no data migration. Nullable without a default: on
         // both databases adding the column rewrites nothing.
         {
             {"ALTER TABLE queue_entries ADD COLUMN envelope {bytes}"},
         }},
        {15,
         "fencing: one epoch check per transaction",
         // The ciphermq_fence triggers fire once per statement and table, and a publish writes
         // three tables in one statement: three checks per commit, a sixth of the backend's CPU
         // when each commit carries one message (bench/README.md, "The fence, checked once per
         // transaction"). The row lock the first check takes lasts until the transaction ends,
         // so the later checks add nothing: the first records itself in a transaction-local
         // setting and the others return at once. A savepoint rolled back reverts the setting
         // together with the lock it took, so the next statement checks again.
         {
             {R"(CREATE OR REPLACE FUNCTION ciphermq_check_epoch() RETURNS trigger
                LANGUAGE plpgsql AS $$
                DECLARE
                    declared TEXT := current_setting('ciphermq.epoch', true);
                BEGIN
                    IF declared IS NULL OR declared = ''
                       OR current_setting('ciphermq.epoch_held', true) = '1' THEN
                        RETURN NULL;
                    END IF;
                    PERFORM 1 FROM cluster_leader WHERE id = 1 AND epoch = declared::BIGINT
                        FOR SHARE;
                    IF NOT FOUND THEN
                        RAISE EXCEPTION 'fenced: leadership epoch % is no longer current, '
                            'another node is active', declared;
                    END IF;
                    PERFORM set_config('ciphermq.epoch_held', '1', true);
                    RETURN NULL;
                END $$)",
              Runs::OnPostgresOnly},
         }},
        {16,
         "fencing: a shared advisory lock instead of a row lock",
         // FOR SHARE wrote the cluster_leader row on every checked transaction (a WAL record, a
         // dirty page, a MultiXact whenever the publish and delivery-update connections held it
         // together) and made the active node's lease renewal wait for every write in flight.
         // A transaction-level shared advisory lock (0x434d51, 3) lives only in the lock table;
         // any change of the epoch takes it exclusively (the row trigger below, so an operator's
         // UPDATE is covered too), which waits for every write that checked the old epoch and
         // holds back every later check until the new epoch is committed. The plain read that
         // follows the lock sees that epoch: in READ COMMITTED each statement of a volatile
         // function takes a new snapshot. A transaction with an older snapshot (REPEATABLE READ
         // and up) could read the old epoch after the change, so it still locks the row, which
         // fails on a concurrent change (docs/STORAGE.md, "Leadership and fencing").
         {
             {R"(CREATE OR REPLACE FUNCTION ciphermq_check_epoch() RETURNS trigger
                LANGUAGE plpgsql AS $$
                DECLARE
                    declared TEXT := current_setting('ciphermq.epoch', true);
                BEGIN
                    IF declared IS NULL OR declared = ''
                       OR current_setting('ciphermq.epoch_held', true) = '1' THEN
                        RETURN NULL;
                    END IF;
                    PERFORM pg_advisory_xact_lock_shared(4410705, 3);
                    IF current_setting('transaction_isolation') = 'read committed' THEN
                        PERFORM 1 FROM cluster_leader WHERE id = 1 AND epoch = declared::BIGINT;
                    ELSE
                        PERFORM 1 FROM cluster_leader WHERE id = 1 AND epoch = declared::BIGINT
                            FOR SHARE;
                    END IF;
                    IF NOT FOUND THEN
                        RAISE EXCEPTION 'fenced: leadership epoch % is no longer current, '
                            'another node is active', declared;
                    END IF;
                    PERFORM set_config('ciphermq.epoch_held', '1', true);
                    RETURN NULL;
                END $$)",
              Runs::OnPostgresOnly},
             {R"(CREATE FUNCTION ciphermq_epoch_change() RETURNS trigger
                LANGUAGE plpgsql AS $$
                BEGIN
                    PERFORM pg_advisory_xact_lock(4410705, 3);
                    RETURN NEW;
                END $$)",
              Runs::OnPostgresOnly},
             {"CREATE TRIGGER ciphermq_epoch_change BEFORE UPDATE ON cluster_leader FOR EACH ROW "
              "WHEN (OLD.epoch IS DISTINCT FROM NEW.epoch) "
              "EXECUTE FUNCTION ciphermq_epoch_change()",
              Runs::OnPostgresOnly},
         }},
        {17,
         "SQLite: the metadata status check as plain comparisons",
         // SQLite evaluates "status IN (four values)" by building a temporary b-tree of the four
         // values, each time a statement checks a row: a pager opened and closed for every
         // message published and every message acknowledged, 8% of the storage thread at W=256
         // (bench/README.md, "SQLite: the status check built a table per row"). A chain of
         // equalities says the same and compiles to four comparisons (NULL passes both forms;
         // NOT NULL rejects it). SQLite cannot alter a constraint, and rebuilding a table that
         // keeps the retention period's metadata could take minutes, so the stored definition
         // is edited in place: the procedure SQLite documents for changing a CHECK constraint
         // (lang_altertable.html, "writable_schema"), which leaves the file's format alone.
         // RESET reloads this connection's copy of the schema; another connection still
         // holding the old text enforces the same rule.
         {
             {"PRAGMA writable_schema = ON", Runs::OnSqliteOnly},
             {"UPDATE sqlite_schema SET sql = replace(sql, "
              "'CHECK (status IN (''sent'', ''delivered'', ''acknowledged'', ''evicted''))', "
              "'CHECK (status = ''sent'' OR status = ''delivered'' "
              "OR status = ''acknowledged'' OR status = ''evicted'')') "
              "WHERE type = 'table' AND name = 'message_metadata'",
              Runs::OnSqliteOnly},
             {"PRAGMA writable_schema = RESET", Runs::OnSqliteOnly},
         }},
    };
    return list;
}

QStringList statementsFor(const Migration &migration, const Dialect &dialect)
{
    QStringList statements;
    for (const Statement &statement : migration.statements) {
        const bool runsHere = statement.runs == Runs::Everywhere ||
                              (statement.runs == Runs::OnPostgresOnly) == dialect.isPostgres();
        if (runsHere)
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

Status applyAll(SqlSession &session, int upToVersion)
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
        if (upToVersion >= 0 && migration.version > upToVersion)
            break;
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

Status migrate(SqlSession &session, int upToVersion)
{
    if (!session.dialect().isServer)
        return applyAll(session, upToVersion); // one process owns the SQLite file

    const QString key = QString::number(MigrationLockKey);
    if (Status st = session.exec(QStringLiteral("SELECT pg_advisory_lock(%1)").arg(key)); !st)
        return failure(QStringLiteral("cannot take the migration lock: %1").arg(st.error()));
    const Status result = applyAll(session, upToVersion);
    if (Status st = session.exec(QStringLiteral("SELECT pg_advisory_unlock(%1)").arg(key)); !st)
        qCWarning(lcStorage) << "cannot release the migration lock:" << st.error();
    return result;
}

} // namespace cmq::storage
