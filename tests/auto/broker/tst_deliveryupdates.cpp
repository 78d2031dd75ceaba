// Delivery updates (delivered, acknowledged, evicted) written by each driver's own path leave the
// same rows: SQLite's per-row statements (bound through SQLite's own API and through QtSql),
// PostgreSQL's one binary statement and PostgreSQL's plain-QtSql fallback, over batches that carry what the folding could get wrong (delivered and
// acknowledged in one batch, a second delivery, two evictions in one batch, an eviction after an
// acknowledgement, a shared envelope whose entries leave one by one, unknown ids, a batch
// applied twice). And on SQLite a batch costs the same work against a long queue as against a
// short one: its statements find their rows by index (once they scanned the whole queue_entries
// table per batch).

#include <QLibrary>
#include <QRegularExpression>
#include <QSqlDriver>
#include <QTest>

#include "sessiondatabase.h"
#include "storage/deliverystore.h"
#include "storage/migrations.h"
#include "storage/publishstore.h"
#include "storedrows.h"

using namespace cmq;
using namespace Qt::StringLiterals;
using namespace cmq::storage;
using Kind = DeliveryUpdate::Kind;

namespace {

const QDateTime baseTime = QDateTime::fromMSecsSinceEpoch(1733054400123, Qt::UTC);

MessageRecord record(const QString &id, const QStringList &queues)
{
    MessageRecord r;
    r.messageId = id.toUtf8();
    r.sender = QStringLiteral("publisher-svc-1");
    r.exchange = QStringLiteral("orders");
    r.routingKey = QStringLiteral("worker-svc-1.new");
    r.envelope = "envelope of " + id.toUtf8();
    r.sentTime = baseTime;
    r.queues = queues;
    return r;
}

DeliveryUpdate update(Kind kind, const QString &queue, const QString &id, int msOffset)
{
    return DeliveryUpdate{kind, queue, id, baseTime.addMSecs(msOffset)};
}

Status publish(SqlSession &session, const QList<MessageRecord> &records)
{
    PublishPlan plan = planPublish(records);
    const Result<QSet<QString>> inserted = writePublishBatch(session, records, plan, 1);
    return inserted ? success() : failure(inserted.error());
}

QList<QList<DeliveryUpdate>> updateBatches()
{
    const QString q1 = QStringLiteral("q1"), q2 = QStringLiteral("q2");
    return {
        {
            update(Kind::Delivered, q1, "a", 10),
            update(Kind::Delivered, q1, "b", 11),
            update(Kind::Acknowledged, q1, "b", 12), // delivered and acknowledged in one batch
            update(Kind::Delivered, q1, "shared", 13),
            update(Kind::Evicted, q1, "d", 14),
            update(Kind::Evicted, q1, "d", 16), // of two evictions in one batch, the last
            update(Kind::Delivered, q2, "f", 15),
        },
        {
            update(Kind::Acknowledged, q1, "a", 20),
            update(Kind::Delivered, q2, "shared", 21),    // the first delivery's time stays
            update(Kind::Acknowledged, q1, "shared", 22), // the body stays: q2 still holds it
            update(Kind::Evicted, q1, "b", 23), // after its acknowledgement: stays acknowledged
            update(Kind::Delivered, q1, "e", 24),
            update(Kind::Delivered, q1, "e", 25), // a redelivery
        },
        {
            update(Kind::Acknowledged, q2, "shared", 30), // the last entry: the body goes
            update(Kind::Acknowledged, q1, "unknown", 31),
            update(Kind::Evicted, q2, "f", 32),
        },
    };
}

QStringList applyAll(const QString &driver, QString *error)
{
    test::SessionDatabase database(driver);
    if (!database.error().isEmpty()) {
        *error = database.error();
        return {};
    }
    SqlSession &session = database.session();
    Status st = migrate(session);
    if (st) {
        st = publish(session, {record("a", {"q1"}), record("b", {"q1"}),
                               record("shared", {"q1", "q2"}), record("d", {"q1"}),
                               record("e", {"q1"}), record("f", {"q2"}), record("g", {"q1"})});
    }
    const QList<QList<DeliveryUpdate>> batches = updateBatches();
    for (qsizetype i = 0; st && i < batches.size(); ++i) {
        st = applyDeliveryUpdates(session, batches[i]);
        if (st && i == 1)
            st = applyDeliveryUpdates(session, batches[i]); // applying twice is harmless
    }
    if (!st) {
        *error = st.error();
        return {};
    }
    return test::storedRows(session);
}

// Five deliveries and five acknowledgements of other messages, of a queue's m0..m9.
QList<DeliveryUpdate> deliveriesAndOtherAcks()
{
    QList<DeliveryUpdate> batch;
    for (int i = 0; i < 5; ++i) {
        batch.append(update(Kind::Delivered, "q1", QStringLiteral("m%1").arg(i), i));
        batch.append(update(Kind::Acknowledged, "q1", QStringLiteral("m%1").arg(i + 5), i));
    }
    return batch;
}

// SQLite's virtual machine instructions run by one delivery-update batch (by default
// deliveriesAndOtherAcks()) against a queue of `backlog` entries: the work, not the time, so
// the comparison holds on a loaded machine.
qint64 sqliteInstructionsPerBatch(int backlog, QString *error,
                                  const QList<DeliveryUpdate> &batch = deliveriesAndOtherAcks())
{
    using ProgressHandler = void (*)(void *, int, int (*)(void *), void *);
    // The libsqlite3 the QSQLITE plugin has loaded.
    const auto setProgressHandler = reinterpret_cast<ProgressHandler>(
        QLibrary::resolve(QStringLiteral("sqlite3"), 0, "sqlite3_progress_handler"));
    test::SessionDatabase database(QStringLiteral("sqlite"));
    if (!setProgressHandler || !database.error().isEmpty()) {
        *error = setProgressHandler ? database.error() : QStringLiteral("no libsqlite3");
        return -1;
    }
    SqlSession &session = database.session();
    QList<MessageRecord> records;
    for (int i = 0; i < backlog; ++i)
        records.append(record(QStringLiteral("m%1").arg(i), {"q1"}));
    Status st = migrate(session);
    if (st)
        st = publish(session, records);
    if (!st) {
        *error = st.error();
        return -1;
    }
    const QVariant handle = session.database().driver()->handle();
    if (qstrcmp(handle.typeName(), "sqlite3*") != 0) {
        *error = QStringLiteral("no sqlite3 handle");
        return -1;
    }
    void *db = *static_cast<void *const *>(handle.constData());
    qint64 instructions = 0;
    setProgressHandler(
        db, 1, [](void *count) { return ++*static_cast<qint64 *>(count), 0; }, &instructions);
    st = applyDeliveryUpdates(session, batch);
    setProgressHandler(db, 0, nullptr, nullptr);
    if (!st) {
        *error = st.error();
        return -1;
    }
    return instructions;
}

} // namespace

class tst_DeliveryUpdates : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sameRows_data();
    void sameRows();
    void sqliteBatchIndependentOfBacklog();
    void sqlitePromptAckWritesTheRowOnce();
    void postgresPlanIndependentOfTableSizes();
};

void tst_DeliveryUpdates::sameRows_data()
{
    QTest::addColumn<QString>("driver");
    QTest::newRow("postgresql") << QStringLiteral("postgresql");
    QTest::newRow("postgresql-qtsql") << QStringLiteral("postgresql-qtsql");
    QTest::newRow("sqlite-qtsql") << QStringLiteral("sqlite-qtsql");
}

void tst_DeliveryUpdates::sameRows()
{
    QFETCH(QString, driver);
    QString error;
    const QStringList sqlite = applyAll(QStringLiteral("sqlite"), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const QStringList other = applyAll(driver, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));

    // The scenario's outcome, spelled out once (times are ms since the epoch).
    const QString t = QString::number(baseTime.toMSecsSinceEpoch());
    auto at = [&](int offset) { return QString::number(baseTime.toMSecsSinceEpoch() + offset); };
    auto metadata = [&](const QString &id, const QString &delivered, const QString &acked,
                        const QString &evicted, const QString &status) {
        return QStringList{"metadata",
                           id,
                           "publisher-svc-1",
                           "orders",
                           "worker-svc-1.new",
                           t,
                           delivered,
                           acked,
                           evicted,
                           status,
                           "1"}
            .join(u'|');
    };
    const QString null = QStringLiteral("NULL");
    const QStringList expected = {
        metadata("a", at(10), at(20), null, "acknowledged"),
        metadata("b", at(11), at(12), at(23), "acknowledged"),
        metadata("d", null, null, at(16), "evicted"),
        metadata("e", at(24), null, null, "delivered"),
        metadata("f", at(15), null, at(32), "evicted"),
        metadata("g", null, null, null, "sent"),
        metadata("shared", at(13), at(30), null, "acknowledged"),
        QStringLiteral("entry|0|q1|e|1|") + test::hex(QByteArray("envelope of e")),
        QStringLiteral("entry|1|q1|g|0|") + test::hex(QByteArray("envelope of g")),
    };
    QCOMPARE(sqlite, expected);
    QCOMPARE(other, sqlite);
}

void tst_DeliveryUpdates::sqliteBatchIndependentOfBacklog()
{
    QString error;
    const qint64 short_ = sqliteInstructionsPerBatch(20, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const qint64 long_ = sqliteInstructionsPerBatch(20000, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    qInfo("SQLite instructions for one batch: %lld behind 20 entries, %lld behind 20,000", short_,
          long_);
    QVERIFY(short_ > 0);
    // A look-up by index goes a few B-tree levels deeper; a scan reads 1,000 times the rows.
    QVERIFY2(long_ < 2 * short_, "a delivery-update batch scales with the queue's length");
}

void tst_DeliveryUpdates::sqlitePromptAckWritesTheRowOnce()
{
    // A delivery acknowledged before the updates are written (the common case: delivered marks
    // are held so that a prompt ack goes with them) is one update of the metadata row, not two:
    // its delivery adds nothing to the batch that its acknowledgement does not already do.
    QList<DeliveryUpdate> acks, deliveredAndAcked;
    for (int i = 0; i < 10; ++i) {
        const QString id = QStringLiteral("m%1").arg(i);
        acks.append(update(Kind::Acknowledged, "q1", id, 100 + i));
        deliveredAndAcked.append(update(Kind::Delivered, "q1", id, i));
    }
    deliveredAndAcked += acks;
    QString error;
    const qint64 acksOnly = sqliteInstructionsPerBatch(20, &error, acks);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const qint64 both = sqliteInstructionsPerBatch(20, &error, deliveredAndAcked);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    qInfo("SQLite instructions for ten acknowledgements: %lld alone, %lld with their deliveries",
          acksOnly, both);
    QVERIFY(acksOnly > 0);
    QVERIFY2(both < acksOnly * 21 / 20, "a prompt ack's delivery costs a statement of its own");
}

// PostgreSQL keeps one plan of the prepared update statement (a generic plan) and builds it again
// after an ANALYZE, from the tables as they are then. Built while queue_entries was empty (a
// drained queue), the statement's joins became a full scan of queue_entries per batch, which
// took 2 s for 500 acknowledgements behind 20,000 entries: a drain at 1,000 msg/s
// (bench/README.md). Here the plan is made, and forced to stay, while the tables are empty;
// then a backlog arrives and a batch of 500 acknowledgements must still find each of its rows by
// one probe. The work is read from EXPLAIN ANALYZE's row counts, not from the time.
void tst_DeliveryUpdates::postgresPlanIndependentOfTableSizes()
{
    test::SessionDatabase database(QStringLiteral("postgresql"));
    QVERIFY2(database.error().isEmpty(), qPrintable(database.error()));
    SqlSession &session = database.session();
    Status st = migrate(session);
    QVERIFY2(st, qPrintable(st.error()));
    st = session.exec(QStringLiteral("ANALYZE queue_entries, message_metadata, message_bodies"));
    QVERIFY2(st, qPrintable(st.error()));
    st = session.exec(QStringLiteral("SET plan_cache_mode = force_generic_plan"));
    QVERIFY2(st, qPrintable(st.error()));
    st = applyDeliveryUpdates(session, {update(Kind::Acknowledged, "q1", "none", 1)});
    QVERIFY2(st, qPrintable(st.error())); // prepared, and planned for empty tables

    const int backlog = 20000, batch = 500;
    st = session.exec(QStringLiteral("INSERT INTO message_metadata (message_id, client_id, "
                                     "exchange, routing_key, sent_time) "
                                     "SELECT 'm' || i, 'publisher-svc-1', 'orders', 'k', now() "
                                     "FROM generate_series(1, %1) i")
                          .arg(backlog));
    QVERIFY2(st, qPrintable(st.error()));
    st = session.exec(QStringLiteral("INSERT INTO queue_entries (queue, message_id, envelope) "
                                     "SELECT 'q1', 'm' || i, '\\x00' FROM generate_series(1, %1) i")
                          .arg(backlog));
    QVERIFY2(st, qPrintable(st.error()));

    QStringList ids, queues, times, zeros;
    for (int i = 1; i <= batch; ++i) {
        ids << QStringLiteral("m%1").arg(i);
        queues << QStringLiteral("q1");
        times << QString::number(baseTime.toMSecsSinceEpoch() + i);
        zeros << QStringLiteral("0");
    }
    auto array = [](const QStringList &items) { return u"'{"_s + items.join(u',') + u"}'"_s; };
    QSqlQuery query = session.newQuery();
    st = session.run(query, QStringLiteral("EXPLAIN (ANALYZE, COSTS OFF) EXECUTE "
                                           "ciphermq_delivery_updates(%1, %2, %3, %4, %5, %6, "
                                           "'{}', '{}')")
                                .arg(array(ids), array(zeros), array(times), array(zeros),
                                     array(queues), array(ids)));
    QVERIFY2(st, qPrintable(st.error()));
    qint64 rowsRemoved = 0;
    static const QRegularExpression removed(QStringLiteral("Rows Removed by [A-Za-z ]+: (\\d+)"));
    QStringList plan;
    while (query.next()) {
        const QString line = query.value(0).toString();
        plan << line;
        if (const QRegularExpressionMatch m = removed.match(line); m.hasMatch())
            rowsRemoved += m.captured(1).toLongLong();
    }
    (void)session.finish(query);
    // A probe per update reads the update's own row; the full scan read the backlog per update.
    QVERIFY2(rowsRemoved <= 2 * batch, qPrintable(plan.join(u'\n')));

    QSqlQuery left = session.newQuery();
    QVERIFY(session.run(left, QStringLiteral("SELECT (SELECT count(*) FROM queue_entries), "
                                             "(SELECT count(*) FROM message_metadata "
                                             "WHERE status = 'acknowledged')")));
    QVERIFY(left.next());
    QCOMPARE(left.value(0).toInt(), backlog - batch);
    QCOMPARE(left.value(1).toInt(), batch);
}

QTEST_GUILESS_MAIN(tst_DeliveryUpdates)
#include "tst_deliveryupdates.moc"
