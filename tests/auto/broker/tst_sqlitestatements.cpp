// SQLite statements kept prepared for the life of the connection (SqliteStatementCache): a
// statement prepared once is reused by the next batch, two users of one statement at once each
// get their own, a kept statement survives a schema change, and SqlSession::close() finalizes
// them all so that SQLite really closes the connection (it refuses while statements are left).

#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

#include "sessiondatabase.h"

using namespace cmq;
using namespace cmq::storage;

namespace {

constexpr char kInsert[] = "INSERT INTO kept (a, b) VALUES (?, ?)";

// Inserts one row with a statement of its own, as a batch does; false with a message on failure.
bool insertRow(SqlSession &session, qint64 a, const QString &b, QString *error)
{
    SqliteRowStatement insert;
    if (const Status st = insert.prepare(session, kInsert); !st) {
        *error = st.error();
        return false;
    }
    insert.bind(0, a);
    insert.bind(1, b);
    if (!insert.exec()) {
        *error = insert.error();
        return false;
    }
    return true;
}

qint64 count(SqlSession &session)
{
    QSqlQuery query = session.newQuery();
    if (!session.run(query, QStringLiteral("SELECT count(*) FROM kept")) || !query.next())
        return -1;
    return query.value(0).toLongLong();
}

} // namespace

class tst_SqliteStatements : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup() { m_db.reset(); }
    void keptAcrossBatches();
    void twoUsersAtOnce();
    void keptStatementSurvivesASchemaChange();
    void closeFinalizesThemSoTheConnectionCloses();
    void qtSqlFallbackKeepsNothing();

private:
    std::unique_ptr<test::SessionDatabase> m_db;
};

void tst_SqliteStatements::init()
{
    const QString driver = QTest::currentTestFunction() == QByteArray("qtSqlFallbackKeepsNothing")
                               ? QStringLiteral("sqlite-qtsql")
                               : QStringLiteral("sqlite");
    m_db = std::make_unique<test::SessionDatabase>(driver);
    QVERIFY2(m_db->error().isEmpty(), qPrintable(m_db->error()));
    QVERIFY(m_db->session().exec(QStringLiteral("CREATE TABLE kept (a INTEGER, b TEXT)")));
}

void tst_SqliteStatements::keptAcrossBatches()
{
    SqlSession &session = m_db->session();
    SqliteStatementCache *cache = session.sqliteStatements();
    QVERIFY(cache);
    QCOMPARE(cache->size(), 0);
    QString error;
    QVERIFY2(insertRow(session, 1, QStringLiteral("one"), &error), qPrintable(error));
    QCOMPARE(cache->size(), 1);
    {
        // The next batch takes the kept statement instead of preparing another.
        SqliteRowStatement insert;
        QVERIFY(insert.prepare(session, kInsert));
        QCOMPARE(cache->size(), 0);
        insert.bind(0, qint64(2));
        insert.bind(1, QStringLiteral("two"));
        QVERIFY2(insert.exec(), qPrintable(insert.error()));
    }
    QCOMPARE(cache->size(), 1);
    QCOMPARE(count(session), 2);
    // Bindings do not outlive the statement that made them: a kept statement run without new
    // values inserts NULLs, not the last user's (freed) text.
    {
        SqliteRowStatement insert;
        QVERIFY(insert.prepare(session, kInsert));
        QVERIFY2(insert.exec(), qPrintable(insert.error()));
    }
    QSqlQuery query = session.newQuery();
    QVERIFY(session.run(query,
                        QStringLiteral("SELECT count(*) FROM kept WHERE a IS NULL AND b IS NULL")));
    QVERIFY(query.next());
    QCOMPARE(query.value(0).toLongLong(), 1);
}

void tst_SqliteStatements::twoUsersAtOnce()
{
    SqlSession &session = m_db->session();
    {
        SqliteRowStatement first, second;
        QVERIFY(first.prepare(session, kInsert));
        QVERIFY(second.prepare(session, kInsert)); // none kept yet: prepared anew
        first.bind(0, qint64(1));
        first.bind(1, QStringLiteral("first"));
        second.bind(0, qint64(2));
        second.bind(1, QStringLiteral("second"));
        QVERIFY2(first.exec(), qPrintable(first.error()));
        QVERIFY2(second.exec(), qPrintable(second.error()));
    }
    QCOMPARE(session.sqliteStatements()->size(), 1); // one kept, the other finalized
    QCOMPARE(count(session), 2);
}

void tst_SqliteStatements::keptStatementSurvivesASchemaChange()
{
    SqlSession &session = m_db->session();
    QString error;
    QVERIFY2(insertRow(session, 1, QStringLiteral("before"), &error), qPrintable(error));
    QVERIFY(session.exec(QStringLiteral("CREATE INDEX kept_b ON kept (b)")));
    QVERIFY(session.exec(QStringLiteral("ALTER TABLE kept ADD COLUMN c INTEGER DEFAULT 7")));
    QVERIFY2(insertRow(session, 2, QStringLiteral("after"), &error), qPrintable(error));
    QSqlQuery query = session.newQuery();
    QVERIFY(session.run(query, QStringLiteral("SELECT a, b, c FROM kept WHERE a = 2")));
    QVERIFY(query.next());
    QCOMPARE(query.value(1).toString(), QStringLiteral("after"));
    QCOMPARE(query.value(2).toLongLong(), 7);
}

void tst_SqliteStatements::closeFinalizesThemSoTheConnectionCloses()
{
    SqlSession &session = m_db->session();
    QString error;
    QVERIFY2(insertRow(session, 1, QStringLiteral("one"), &error), qPrintable(error));
    QCOMPARE(session.sqliteStatements()->size(), 1);
    session.close();
    QCOMPARE(session.sqliteStatements(), nullptr); // closed: no connection to keep them on
    // SQLite closed the connection: QSQLITE reports no "Error closing database".
    QVERIFY(!session.database().isOpen());
    QCOMPARE(session.database().lastError().type(), QSqlError::NoError);
}

void tst_SqliteStatements::qtSqlFallbackKeepsNothing()
{
    SqlSession &session = m_db->session();
    QCOMPARE(session.sqliteStatements(), nullptr);
    QString error;
    QVERIFY2(insertRow(session, 1, QStringLiteral("one"), &error), qPrintable(error));
    QVERIFY2(insertRow(session, 2, QStringLiteral("two"), &error), qPrintable(error));
    QCOMPARE(count(session), 2);
}

QTEST_GUILESS_MAIN(tst_SqliteStatements)
#include "tst_sqlitestatements.moc"
