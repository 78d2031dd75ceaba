// The schema the migrations create, compared with the schema databases already have: the
// catalogue of a freshly migrated database must equal the recorded one
// (data/schema-<driver>.txt, taken from the broker that shipped the migrations) line for line.
// SQLite keeps the CREATE statements' text itself, so there even a changed space would show.
// When it differs, the actual catalogue is written beside the build for a diff.

#include <QDir>
#include <QFile>
#include <QSqlError>
#include <QSqlQuery>
#include <QScopeGuard>
#include <QSqlRecord>
#include <QTest>

#include "sessiondatabase.h"
#include "storage/migrations.h"

using namespace cmq;
using namespace Qt::StringLiterals;

namespace {

// Every row of `sql`, columns joined by " | " (NULL as "NULL").
QStringList rows(QSqlDatabase db, const QString &sql)
{
    QSqlQuery query(db);
    if (!query.exec(sql))
        return {QStringLiteral("ERROR: ") + query.lastError().text()};
    QStringList out;
    while (query.next()) {
        QStringList columns;
        for (int i = 0; i < query.record().count(); ++i)
            columns << (query.isNull(i) ? QStringLiteral("NULL") : query.value(i).toString());
        out << columns.join(QStringLiteral(" | "));
    }
    return out;
}

QStringList catalogue(test::SessionDatabase &database)
{
    QSqlDatabase db = database.session().database();
    QStringList out;
    auto section = [&](const QString &name, const QString &sql) {
        out << QStringLiteral("## ") + name;
        out << rows(db, sql);
    };
    section(QStringLiteral("schema_version"),
            QStringLiteral("SELECT version, description FROM schema_version ORDER BY version"));
    if (!database.isPostgres()) {
        section(QStringLiteral("sqlite_master"),
                QStringLiteral("SELECT type, name, tbl_name, sql FROM sqlite_master "
                               "ORDER BY type, name"));
        return out;
    }
    section(QStringLiteral("columns"),
            QStringLiteral("SELECT table_name, column_name, data_type, is_nullable, "
                           "column_default FROM information_schema.columns "
                           "WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"));
    section(QStringLiteral("constraints"),
            QStringLiteral("SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
                           "FROM pg_constraint WHERE connamespace = 'public'::regnamespace "
                           "ORDER BY 1, 2"));
    section(QStringLiteral("indexes"),
            QStringLiteral("SELECT indexname, indexdef FROM pg_indexes "
                           "WHERE schemaname = 'public' ORDER BY indexname"));
    section(QStringLiteral("relations"),
            QStringLiteral("SELECT relname, relkind, reloptions::text FROM pg_class "
                           "WHERE relnamespace = 'public'::regnamespace ORDER BY relname"));
    return out;
}

} // namespace

class tst_StorageSchema : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void freshSchemaIsTheShippedOne_data();
    void freshSchemaIsTheShippedOne();
    void upgradeKeepsQueueEntries_data();
    void upgradeKeepsQueueEntries();
    void fenceHoldsForTheWholeTransaction();
    void sqliteStatusCheckBuildsNoTable();
};

void tst_StorageSchema::freshSchemaIsTheShippedOne_data()
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("sqlite") << QStringLiteral("sqlite");
    QTest::newRow("postgresql") << QStringLiteral("postgresql");
}

void tst_StorageSchema::freshSchemaIsTheShippedOne()
{
    QFETCH(QString, driver);
    test::SessionDatabase database(driver);
    QVERIFY2(database.error().isEmpty(), qPrintable(database.error()));
    const Status migrated = storage::migrate(database.session());
    QVERIFY2(migrated, qPrintable(migrated.error()));

    const QString expectedPath = QStringLiteral(CMQ_SCHEMA_DIR "/schema-%1.txt").arg(driver);
    QFile expectedFile(expectedPath);
    QVERIFY2(expectedFile.open(QIODevice::ReadOnly), qPrintable(expectedPath));
    const QString expected = QString::fromUtf8(expectedFile.readAll());
    const QString actual = catalogue(database).join(u'\n') + u'\n';
    if (actual != expected) {
        const QString actualPath =
            QDir::current().absoluteFilePath(QStringLiteral("schema-%1.actual.txt").arg(driver));
        QFile out(actualPath);
        if (out.open(QIODevice::WriteOnly))
            out.write(actual.toUtf8());
        QFAIL(qPrintable(QStringLiteral("the migrated schema differs from %1; it is in %2")
                             .arg(expectedPath, actualPath)));
    }
}

void tst_StorageSchema::upgradeKeepsQueueEntries_data()
{
    freshSchemaIsTheShippedOne_data();
}

// Migrations 11 and 13 re-key queue_entries (SQLite: the table is rebuilt). Entries written
// under the old keys come through with their ids, queues and delivered flags; new ones continue
// the id order, and the (queue, message_id) conflict the dead-letter moves rely on still holds.
void tst_StorageSchema::upgradeKeepsQueueEntries()
{
    QFETCH(QString, driver);
    test::SessionDatabase database(driver);
    QVERIFY2(database.error().isEmpty(), qPrintable(database.error()));
    const Status before = storage::migrate(database.session(), 10);
    QVERIFY2(before, qPrintable(before.error()));
    QSqlQuery query(database.session().database());
    auto exec = [&](const char *sql) {
        const bool ok = query.exec(QString::fromLatin1(sql));
        if (!ok)
            qWarning() << sql << query.lastError().text();
        return ok;
    };
    QVERIFY(exec("INSERT INTO queue_entries (queue, message_id, delivered) VALUES "
                 "('a', 'm1', FALSE), ('b', 'm1', TRUE), ('a', 'm2', FALSE), ('a', 'm3', FALSE)"));
    QVERIFY(exec("DELETE FROM queue_entries WHERE message_id = 'm2'"));

    const Status after = storage::migrate(database.session());
    QVERIFY2(after, qPrintable(after.error()));
    QCOMPARE(storage::currentSchemaVersion(database.session()).value(),
             storage::latestSchemaVersion());
    QVERIFY(exec("INSERT INTO queue_entries (queue, message_id) VALUES ('b', 'm4')"));
    QVERIFY(exec("INSERT INTO queue_entries (queue, message_id) VALUES ('a', 'm1') "
                 "ON CONFLICT (queue, message_id) DO NOTHING"));
    QVERIFY(!exec("INSERT INTO queue_entries (queue, message_id) VALUES ('b', 'm1')"));
    QStringList entries;
    QVERIFY(exec("SELECT id, queue, message_id, delivered FROM queue_entries ORDER BY id"));
    while (query.next()) {
        entries << QStringLiteral("%1 %2 %3 %4").arg(query.value(0).toString(),
                                                    query.value(1).toString(),
                                                    query.value(2).toString(),
                                                    query.value(3).toBool() ? u"delivered"_s
                                                                            : u"ready"_s);
    }
    QCOMPARE(entries, QStringList({u"1 a m1 ready"_s, u"2 b m1 delivered"_s, u"4 a m3 ready"_s,
                                   u"5 b m4 ready"_s}));
}

// The fencing trigger (docs/STORAGE.md, "Leadership and fencing") checks the declared epoch once
// per transaction (migration 15): the lock of that first check (a shared advisory lock since
// migration 16) must keep a takeover waiting until the transaction ends, later statements of the
// transaction must pass without a check of their own, and a savepoint rolled back must give up
// the lock and the "checked" mark together. The active node's lease renewal (an UPDATE of the
// row that leaves the epoch alone) must not wait for writes in flight: with migration 15's row
// lock it did. A REPEATABLE READ transaction whose snapshot predates a takeover must not pass.
void tst_StorageSchema::fenceHoldsForTheWholeTransaction()
{
    test::SessionDatabase database(u"postgresql"_s);
    QVERIFY2(database.error().isEmpty(), qPrintable(database.error()));
    const Status migrated = storage::migrate(database.session());
    QVERIFY2(migrated, qPrintable(migrated.error()));

    QSqlDatabase node = database.session().database(); // the active broker's connection
    const QString takeoverName = u"fence-takeover"_s;
    QSqlDatabase takeover = QSqlDatabase::cloneDatabase(node, takeoverName);
    QVERIFY2(takeover.open(), qPrintable(takeover.lastError().text()));
    auto cleanup = qScopeGuard([&] {
        takeover.close();
        takeover = QSqlDatabase();
        QSqlDatabase::removeDatabase(takeoverName);
    });
    QSqlQuery onNode(node);
    QSqlQuery onTakeover(takeover);
    auto run = [](QSqlQuery &query, const QString &sql) {
        const bool ok = query.exec(sql);
        if (ok)
            return u"ok"_s;
        // The server's message, without its "ERROR:  " prefix and any context lines.
        QString text = query.lastError().databaseText().section(u'\n', 0, 0);
        if (text.startsWith(u"ERROR:"))
            text = text.mid(6).trimmed();
        return text;
    };
    auto write = [&](const QString &exchange) {
        return run(onNode, u"INSERT INTO exchanges (name, type, creator, created_at) "
                           "VALUES ('%1', 'direct', 'test', now())"_s.arg(exchange));
    };
    auto bumpEpoch = [&](int epoch) {
        return run(onTakeover, u"UPDATE cluster_leader SET epoch = %1 WHERE id = 1"_s.arg(epoch));
    };
    const QString fenced = u"fenced: leadership epoch 7 is no longer current, another node is "
                           "active"_s;
    const QString waiting = u"canceling statement due to lock timeout"_s;

    QCOMPARE(run(onTakeover, u"SET lock_timeout = '200ms'"_s), u"ok"_s);
    QCOMPARE(bumpEpoch(7), u"ok"_s);
    QCOMPARE(run(onNode, u"SELECT set_config('ciphermq.epoch', '7', false)"_s), u"ok"_s);

    // The first write takes the lock; a takeover waits; the second write needs no check.
    QCOMPARE(run(onNode, u"BEGIN"_s), u"ok"_s);
    QCOMPARE(write(u"first"_s), u"ok"_s);
    QCOMPARE(bumpEpoch(8), waiting);
    QCOMPARE(write(u"second"_s), u"ok"_s);
    QCOMPARE(run(onNode, u"COMMIT"_s), u"ok"_s);
    // Committed: now the takeover goes through and the next transaction is fenced.
    QCOMPARE(bumpEpoch(8), u"ok"_s);
    QCOMPARE(write(u"third"_s), fenced);

    // A savepoint rolled back gives up the lock, and the check is made again afterwards.
    QCOMPARE(bumpEpoch(7), u"ok"_s);
    QCOMPARE(run(onNode, u"BEGIN"_s), u"ok"_s);
    QCOMPARE(run(onNode, u"SAVEPOINT attempt"_s), u"ok"_s);
    QCOMPARE(write(u"rolled-back"_s), u"ok"_s);
    QCOMPARE(run(onNode, u"ROLLBACK TO SAVEPOINT attempt"_s), u"ok"_s);
    QCOMPARE(bumpEpoch(8), u"ok"_s);
    QCOMPARE(write(u"after-rollback"_s), fenced);
    QCOMPARE(run(onNode, u"ROLLBACK"_s), u"ok"_s);

    QCOMPARE(run(onNode, u"SELECT name FROM exchanges ORDER BY name"_s), u"ok"_s);
    QStringList names;
    while (onNode.next())
        names << onNode.value(0).toString();
    QCOMPARE(names, (QStringList{u"first"_s, u"second"_s}));

    // Lease renewal beside an open write: no wait. The takeover still waits.
    QCOMPARE(bumpEpoch(7), u"ok"_s);
    QCOMPARE(run(onNode, u"BEGIN"_s), u"ok"_s);
    QCOMPARE(write(u"renewed"_s), u"ok"_s);
    QCOMPARE(run(onTakeover,
                 u"UPDATE cluster_leader SET renewed_at = now() WHERE id = 1 AND epoch = 7"_s),
             u"ok"_s);
    QCOMPARE(bumpEpoch(8), waiting);
    QCOMPARE(run(onNode, u"COMMIT"_s), u"ok"_s);

    // A snapshot taken before the takeover committed must not see the old epoch as current.
    QCOMPARE(bumpEpoch(7), u"ok"_s);
    QCOMPARE(run(onNode, u"BEGIN ISOLATION LEVEL REPEATABLE READ"_s), u"ok"_s);
    QCOMPARE(run(onNode, u"SELECT count(*) FROM exchanges"_s), u"ok"_s); // takes the snapshot
    QCOMPARE(bumpEpoch(8), u"ok"_s);
    QCOMPARE_NE(write(u"stale-snapshot"_s), u"ok"_s);
    QCOMPARE(run(onNode, u"ROLLBACK"_s), u"ok"_s);
    QCOMPARE(run(onNode, u"SELECT count(*) FROM exchanges WHERE name = 'stale-snapshot'"_s),
             u"ok"_s);
    QVERIFY(onNode.next());
    QCOMPARE(onNode.value(0).toInt(), 0);
}

// Migration 17: SQLite compiled the metadata status check "status IN (four values)" into a
// temporary b-tree built for every row checked, a pager opened and closed for every message
// published and acknowledged (bench/README.md). Rows written before the migration stay, the
// statements the broker runs on every message build no table, and the check still refuses a
// status outside the four.
void tst_StorageSchema::sqliteStatusCheckBuildsNoTable()
{
    test::SessionDatabase database(u"sqlite"_s);
    QVERIFY2(database.error().isEmpty(), qPrintable(database.error()));
    const Status before = storage::migrate(database.session(), 16);
    QVERIFY2(before, qPrintable(before.error()));
    QSqlQuery query(database.session().database());
    auto exec = [&](const QString &sql) {
        const bool ok = query.exec(sql);
        if (!ok)
            qWarning() << sql << query.lastError().text();
        return ok;
    };
    QVERIFY(exec(u"INSERT INTO message_metadata (message_id, client_id, exchange, routing_key, "
                 "sent_time, status) VALUES ('m1', 'alice', 'x', 'k', "
                 "'2026-12-07T00:00:00.000Z', 'delivered')"_s));

    const Status after = storage::migrate(database.session());
    QVERIFY2(after, qPrintable(after.error()));
    // The statements of the publish and delivery-update paths (publishwriter.cpp,
    // deliverystore.cpp), as SQLite would run them.
    const QString perMessage[] = {
        u"INSERT INTO message_metadata (message_id, client_id, exchange, routing_key, sent_time, "
        "status, commit_token) VALUES ('m2', 'alice', 'x', 'k', '2026-12-07T00:00:01.000Z', "
        "'sent', 1) ON CONFLICT (message_id) DO NOTHING"_s,
        u"UPDATE message_metadata SET delivered_time = COALESCE(delivered_time, NULL), "
        "acknowledged_time = '2026-12-07T00:00:02.000Z', status = 'acknowledged' "
        "WHERE message_id = 'm2'"_s,
        u"UPDATE message_metadata SET delivered_time = '2026-12-07T00:00:02.000Z', "
        "status = CASE WHEN status = 'sent' THEN 'delivered' ELSE status END "
        "WHERE message_id = 'm2' AND delivered_time IS NULL"_s,
    };
    for (const QString &sql : perMessage) {
        QVERIFY(exec(u"EXPLAIN "_s + sql));
        QStringList opcodes;
        while (query.next())
            opcodes << query.value(1).toString();
        QVERIFY2(!opcodes.contains(u"OpenEphemeral"_s), qPrintable(sql));
        QVERIFY(exec(sql));
    }
    QVERIFY(exec(u"SELECT message_id, status FROM message_metadata ORDER BY message_id"_s));
    QStringList rows;
    while (query.next())
        rows << query.value(0).toString() + u' ' + query.value(1).toString();
    QCOMPARE(rows, QStringList({u"m1 delivered"_s, u"m2 acknowledged"_s}));
    QVERIFY(!query.exec(u"UPDATE message_metadata SET status = 'lost' WHERE message_id = 'm1'"_s));
    QVERIFY2(query.lastError().text().contains(u"CHECK constraint failed"_s),
             qPrintable(query.lastError().text()));
    for (const char *status : {"sent", "delivered", "acknowledged", "evicted"})
        QVERIFY(exec(u"UPDATE message_metadata SET status = '%1' WHERE message_id = 'm1'"_s.arg(
            QLatin1StringView(status))));
}

QTEST_GUILESS_MAIN(tst_StorageSchema)
#include "tst_storageschema.moc"
