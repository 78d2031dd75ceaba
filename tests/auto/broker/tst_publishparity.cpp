// The publish writers of both drivers store the same rows: the same batches written through SQLite
// (through its own API and through QtSql), PostgreSQL with libpq's binary arrays and PostgreSQL
// through plain QtSql must leave the same metadata, envelopes and queue entries (in the same order)
// and report the same ids as inserted. The batches carry what a writer could get wrong: quotes,
// backslashes, braces and commas (array syntax), non-ASCII text, every byte value in an envelope, a
// large envelope, repeated target queues, repeats within a batch and ids already in the database,
// in batches of many messages and of one (which PostgreSQL writes with a statement of its own).

#include <QRandomGenerator>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QTest>

#include "sessiondatabase.h"
#include "storage/migrations.h"
#include "storage/publishstore.h"
#include "storedrows.h"

using namespace cmq;
using namespace cmq::storage;

namespace {

const QDateTime baseTime = QDateTime::fromMSecsSinceEpoch(1733054400123, Qt::UTC);

MessageRecord record(const QString &id, const QStringList &queues, const QByteArray &envelope,
                     int msOffset)
{
    MessageRecord r;
    r.messageId = id.toUtf8();
    r.sender = QStringLiteral("publisher-svc-1");
    r.exchange = QStringLiteral("orders");
    r.routingKey = QStringLiteral("worker-svc-1.new");
    r.envelope = envelope;
    r.sentTime = baseTime.addMSecs(msOffset);
    r.queues = queues;
    return r;
}

QByteArray everyByte()
{
    QByteArray bytes;
    for (int i = 0; i < 256; ++i)
        bytes.append(char(i));
    return bytes;
}

QList<QList<MessageRecord>> batches()
{
    QList<MessageRecord> first = {
        record(QStringLiteral("m-1"), {"q1"}, R"({"message_id":"m-1","ciphertext":"AAEC"})", 0),
        record(QStringLiteral("already-there"), {"q1", "q2"}, "x", 1),
    };
    QList<MessageRecord> second = {
        record(QStringLiteral("quote's \"double\" \\back\\slash"), {"q1"}, "'\\\"", 2),
        record(QStringLiteral("{brace},comma"), {"q{1}", "q,2", "q1", "q{1}"}, everyByte(), 3),
        record(QStringLiteral("grüße-消息-😀"), {"Warteschlange-ü"}, QByteArray(1, '\0'), 4),
        record(QStringLiteral("already-there"), {"q3"}, "again", 5), // from the first batch
        record(QStringLiteral("NULL"), {"q2"}, QByteArray(65536, '\xff'), 6),
        record(QStringLiteral("m-1"), {"q2"}, "again", 7),                // from the first batch
        record(QStringLiteral("in-batch"), {"q2", "q1"}, "a", 8),         //
        record(QStringLiteral("in-batch"), {"q3"}, "b", 9),               // repeat within the batch
        record(QStringLiteral("one-queue-twice"), {"q3", "q3"}, "c", 10), // one entry: its own
        record(QString(), {"q1"}, "no id", 10),                           // refused by the plan
    };
    second.last().messageId.clear();
    // Odd characters in the other text columns too.
    second[0].sender = QStringLiteral("svc 'o' \\ \"x\"");
    second[1].exchange = QStringLiteral("ex{1,2}");
    second[2].routingKey = QStringLiteral("ключ.ü");
    // Batches of one message for one queue: PostgreSQL writes them with a statement of their own
    // (scalar parameters instead of arrays), new, already stored, and after a refused record.
    QList<MessageRecord> single = {
        record(QStringLiteral("single 'q' {a,b} \\ ü"), {"q{1}"}, everyByte(), 11)};
    single[0].sender = QStringLiteral("svc {1,2} 'o' ü");
    single[0].exchange = QStringLiteral("ex \"x\"");
    single[0].routingKey = QStringLiteral("rk,ключ");
    QList<MessageRecord> singleStored = {record(QStringLiteral("m-1"), {"q3"}, "again", 12)};
    QList<MessageRecord> singleTwice = {
        record(QStringLiteral("single-twice"), {"q2", "q2"}, QByteArray(1, '\0'), 13)};
    QList<MessageRecord> afterRefused = {
        record(QString(), {"q1"}, "no id", 14),
        record(QStringLiteral("after-refused"), {"q1"}, QByteArray(65536, 'z'), 15)};
    afterRefused.first().messageId.clear();
    return {first, second, single, singleStored, singleTwice, afterRefused};
}

struct Written
{
    QStringList inserted; // per batch, sorted ids, then the outcomes
    QStringList rows;
    QStringList sqliteClasses; // SQLite only: each stored value's storage class, row by row
};

// typeof() of every column the writer fills: a value bound as a blob where QtSql binds text
// would compare unequal to the same id bound as text by another statement.
QStringList sqliteStorageClasses(storage::SqlSession &session)
{
    QStringList classes;
    for (const char *sql :
         {"SELECT message_id, typeof(message_id), typeof(client_id), typeof(exchange), "
          "typeof(routing_key), typeof(sent_time), typeof(status), typeof(commit_token) "
          "FROM message_metadata ORDER BY message_id",
          "SELECT message_id, typeof(message_id), typeof(envelope) FROM message_bodies "
          "ORDER BY message_id",
          "SELECT id, typeof(queue), typeof(message_id), typeof(delivered), typeof(envelope) "
          "FROM queue_entries ORDER BY id"}) {
        QSqlQuery query = session.newQuery();
        if (!query.exec(QString::fromLatin1(sql)))
            return {QStringLiteral("ERROR: ") + query.lastError().text()};
        while (query.next()) {
            QStringList row;
            for (int column = 0; column < query.record().count(); ++column)
                row << query.value(column).toString();
            classes << row.join(u'|');
        }
    }
    return classes;
}

Written writeAll(const QString &driver, QString *error)
{
    test::SessionDatabase database(driver);
    if (!database.error().isEmpty()) {
        *error = database.error();
        return {};
    }
    if (Status st = migrate(database.session()); !st) {
        *error = st.error();
        return {};
    }
    Written written;
    qint64 token = 4242;
    for (const QList<MessageRecord> &batch : batches()) {
        PublishPlan plan = planPublish(batch);
        const Result<QSet<QString>> inserted =
            writePublishBatch(database.session(), batch, plan, token++);
        if (!inserted) {
            *error = inserted.error();
            return {};
        }
        QStringList ids = inserted->values();
        ids.sort();
        completePlan(plan, inserted.value());
        QStringList outcomes;
        for (const PublishResult &result : plan.results)
            outcomes << QString::number(int(result.outcome)) + u':' + result.error;
        written.inserted << ids.join(u',') + u' ' + outcomes.join(u',');
    }
    written.rows = test::storedRows(database.session());
    if (!database.isPostgres())
        written.sqliteClasses = sqliteStorageClasses(database.session());
    return written;
}

} // namespace

class tst_PublishParity : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sameRows_data();
    void sameRows();
    void timeTextAsQtWritesIt();
    void sqliteStorageClassesAsQtWritesThem();
};

void tst_PublishParity::sameRows_data()
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("postgresql") << QStringLiteral("postgresql");
    QTest::newRow("postgresql-qtsql") << QStringLiteral("postgresql-qtsql");
    QTest::newRow("sqlite-qtsql") << QStringLiteral("sqlite-qtsql");
}

void tst_PublishParity::sameRows()
{
    QFETCH(QString, driver);
    QString error;
    const Written sqlite = writeAll(QStringLiteral("sqlite"), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const Written other = writeAll(driver, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));

    // The scenario covers what it says: every batch but the repeat of m-1 inserted something,
    // and every table has rows.
    QCOMPARE(sqlite.inserted.size(), 6);
    QCOMPARE(sqlite.inserted.mid(2),
             QStringList({"single 'q' {a,b} \\ ü 0:", " 1:", "single-twice 0:",
                          "after-refused 2:empty message id,0:"}));
    QVERIFY(sqlite.rows.filter(QStringLiteral("entry|")).size() > 8);
    // Shared envelopes only for the messages routed to several queues (migration 14).
    QStringList bodies = sqlite.rows.filter(QStringLiteral("body|"));
    for (QString &row : bodies)
        row = row.section(u'|', 1, 1);
    QCOMPARE(bodies, QStringList({"already-there", "in-batch", "{brace},comma"}));
    qsizetype sharedEntries = 0;
    for (const QString &row : sqlite.rows)
        sharedEntries += row.startsWith(u"entry|") && row.endsWith(u"|NULL");
    QCOMPARE(sharedEntries, 2 + 2 + 3);
    QCOMPARE(other.inserted, sqlite.inserted);
    QCOMPARE(other.rows, sqlite.rows);
}

// SQLite stores times as text, formatted by SqlSession::isoTime instead of QDateTime::toString
// (cheaper); rows written before and after must compare and sort alike.
void tst_PublishParity::timeTextAsQtWritesIt()
{
    auto qt = [](const QDateTime &t) {
        return t.isValid() ? t.toUTC().toString(Qt::ISODateWithMs) : QString();
    };
    QList<QDateTime> times = {
        QDateTime::fromMSecsSinceEpoch(0, Qt::UTC),
        QDateTime::fromMSecsSinceEpoch(-1, Qt::UTC), // before 1970: Qt's own
        QDateTime::fromMSecsSinceEpoch(86'399'999, Qt::UTC),
        QDateTime(QDate(1972, 2, 29), QTime(23, 59, 59, 999), Qt::UTC),
        QDateTime(QDate(2000, 2, 29), QTime(12, 0), Qt::UTC),
        QDateTime(QDate(2100, 3, 1), QTime(0, 0), Qt::UTC),
        QDateTime(QDate(9999, 12, 31), QTime(23, 59, 59, 999), Qt::UTC),
        QDateTime(QDate(10000, 1, 1), QTime(0, 0), Qt::UTC), // past year 9999: Qt's own
        QDateTime(QDate(2026, 12, 6), QTime(1, 2, 3, 4), Qt::OffsetFromUTC, 5 * 3600),
        QDateTime(),
    };
    QRandomGenerator random(20261206);
    for (int i = 0; i < 20'000; ++i)
        times.append(
            QDateTime::fromMSecsSinceEpoch(random.bounded(qint64(253'402'300'800'000)), Qt::UTC));
    for (const QDateTime &t : std::as_const(times))
        QCOMPARE(SqlSession::isoTime(t), qt(t));
}

void tst_PublishParity::sqliteStorageClassesAsQtWritesThem()
{
    // Rows written before SQLite's own API was used (through QtSql) and after must be found by
    // the same statements: every value keeps the storage class QtSql gave it.
    QString error;
    const Written own = writeAll(QStringLiteral("sqlite"), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const Written qt = writeAll(QStringLiteral("sqlite-qtsql"), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(own.sqliteClasses.size() > 10);
    QVERIFY(own.sqliteClasses.filter(u"blob").size() > 0); // envelopes
    QCOMPARE(own.sqliteClasses, qt.sqliteClasses);
}

QTEST_GUILESS_MAIN(tst_PublishParity)
#include "tst_publishparity.moc"
