// The schema the migrations create, compared with the schema databases already have: the
// catalogue of a freshly migrated database must equal the recorded one
// (data/schema-<driver>.txt, taken from the broker that shipped the migrations) line for line.
// SQLite keeps the CREATE statements' text itself, so there even a changed space would show.
// When it differs, the actual catalogue is written beside the build for a diff.

#include <QDir>
#include <QFile>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QTest>

#include "sessiondatabase.h"
#include "storage/migrations.h"

using namespace cmq;

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

QTEST_GUILESS_MAIN(tst_StorageSchema)
#include "tst_storageschema.moc"
