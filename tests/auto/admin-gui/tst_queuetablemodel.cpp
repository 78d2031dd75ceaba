// QueueTableModel and the JsonTableModel update rules it inherits: snapshots update rows in
// place (dataChanged), and only vanished/new queues are removed/inserted, so a view keeps its
// selection; rates come from the change between snapshots.

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonObject>
#include <QSignalSpy>
#include <QtTest>

#include "models/queuetablemodel.h"

using cmq::admingui::JsonTableModel;
using cmq::admingui::QueueTableModel;

namespace {

// "a:3,b:0" → queues a (ready 3) and b (ready 0).
QJsonArray queues(const QString &spec)
{
    QJsonArray array;
    for (const QString &item : spec.split(',', Qt::SkipEmptyParts)) {
        const QStringList parts = item.split(':');
        array.append(QJsonObject{{"name", parts[0]},
                                 {"owner", "receiver_1"},
                                 {"ready", parts.value(1).toInt()},
                                 {"unacked", 0},
                                 {"published", parts.value(2).toInt()},
                                 {"delivered", 0},
                                 {"max_length", 10000},
                                 {"overflow", "drop-head"}});
    }
    return array;
}

QStringList names(const QueueTableModel &model)
{
    QStringList list;
    for (int row = 0; row < model.rowCount(); ++row)
        list.append(
            model.data(model.index(row, QueueTableModel::Name), Qt::DisplayRole).toString());
    return list;
}

} // namespace

class tst_QueueTableModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void incrementalUpdate_data();
    void incrementalUpdate();
    void keepsPersistentIndexes();
    void rates();
    void sortAndDisplayRoles();
    void oldestReadyAge();
    void modelTester();
};

void tst_QueueTableModel::incrementalUpdate_data()
{
    QTest::addColumn<QString>("before");
    QTest::addColumn<QString>("after");
    QTest::addColumn<QStringList>("rows");
    QTest::addColumn<int>("inserted");
    QTest::addColumn<int>("removed");
    QTest::addColumn<int>("changed"); // dataChanged emissions (runs of changed rows)

    QTest::newRow("first snapshot") << ""
                                    << "a:1,b:2" << QStringList{"a", "b"} << 1 << 0 << 0;
    QTest::newRow("nothing changed") << "a:1,b:2"
                                     << "a:1,b:2" << QStringList{"a", "b"} << 0 << 0 << 0;
    QTest::newRow("one count changed")
        << "a:1,b:2,c:3"
        << "a:1,b:5,c:3" << QStringList{"a", "b", "c"} << 0 << 0 << 1;
    QTest::newRow("two separate rows changed")
        << "a:1,b:2,c:3"
        << "a:9,b:2,c:9" << QStringList{"a", "b", "c"} << 0 << 0 << 2;
    QTest::newRow("queue added") << "a:1"
                                 << "a:1,b:0" << QStringList{"a", "b"} << 1 << 0 << 0;
    QTest::newRow("queue removed in the middle")
        << "a:1,b:2,c:3"
        << "a:1,c:3" << QStringList{"a", "c"} << 0 << 1 << 0;
    QTest::newRow("two runs removed") << "a:1,b:2,c:3,d:4"
                                      << "b:2,d:4" << QStringList{"b", "d"} << 0 << 2 << 0;
    QTest::newRow("reordered snapshot keeps rows")
        << "a:1,b:2"
        << "b:2,a:1" << QStringList{"a", "b"} << 0 << 0 << 0;
    QTest::newRow("all gone") << "a:1,b:2"
                              << "" << QStringList{} << 0 << 1 << 0;
    QTest::newRow("replace, change and add") << "a:1,b:2"
                                             << "b:3,c:0" << QStringList{"b", "c"} << 1 << 1 << 1;
}

void tst_QueueTableModel::incrementalUpdate()
{
    QFETCH(QString, before);
    QFETCH(QString, after);
    QFETCH(QStringList, rows);
    QFETCH(int, inserted);
    QFETCH(int, removed);
    QFETCH(int, changed);

    QueueTableModel model;
    model.update(queues(before));
    QSignalSpy insertSpy(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removeSpy(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy changeSpy(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy resetSpy(&model, &QAbstractItemModel::modelReset);
    model.update(queues(after));

    QCOMPARE(names(model), rows);
    QCOMPARE(insertSpy.size(), inserted);
    QCOMPARE(removeSpy.size(), removed);
    QCOMPARE(changeSpy.size(), changed);
    QCOMPARE(resetSpy.size(), 0);
    for (int row = 0; row < model.rowCount(); ++row)
        QCOMPARE(model.rowOf(rows[row]), row);
}

void tst_QueueTableModel::keepsPersistentIndexes()
{
    QueueTableModel model;
    model.update(queues("a:1,b:2,c:3"));
    const QPersistentModelIndex c = model.index(2, 0);
    model.update(queues("b:2,c:7,d:1")); // a removed above c, c changed
    QVERIFY(c.isValid());
    QCOMPARE(c.data().toString(), QStringLiteral("c"));
    QCOMPARE(model.index(c.row(), QueueTableModel::Ready).data().toString(), QStringLiteral("7"));
}

void tst_QueueTableModel::rates()
{
    QueueTableModel model;
    model.updateQueues(queues("a:0:100"), 10.0);
    QCOMPARE(model.index(0, QueueTableModel::PublishRate).data(JsonTableModel::SortRole).toDouble(),
             0.0);
    model.updateQueues(queues("a:0:150"), 12.0); // 50 messages in 2 s
    QCOMPARE(model.index(0, QueueTableModel::PublishRate).data(JsonTableModel::SortRole).toDouble(),
             25.0);
    model.updateQueues(queues("a:0:10"), 13.0); // recreated: never a negative rate
    QCOMPARE(model.index(0, QueueTableModel::PublishRate).data(JsonTableModel::SortRole).toDouble(),
             0.0);
}

void tst_QueueTableModel::sortAndDisplayRoles()
{
    QueueTableModel model;
    model.update(queues("a:1000"));
    QCOMPARE(model.columnCount(), int(QueueTableModel::ColumnCount));
    QCOMPARE(model.headerData(QueueTableModel::Ready, Qt::Horizontal, Qt::DisplayRole).toString(),
             QStringLiteral("Ready"));
    // Numbers sort as numbers (1000 > 9), display as text.
    QCOMPARE(model.index(0, QueueTableModel::Ready).data(JsonTableModel::SortRole).typeId(),
             QMetaType::Double);
    QCOMPARE(model.index(0, QueueTableModel::Ready).data().toString(), QStringLiteral("1000"));
    QCOMPARE(model.index(0, QueueTableModel::Overflow).data().toString(),
             QStringLiteral("drop-head"));
}

void tst_QueueTableModel::oldestReadyAge()
{
    QueueTableModel model;
    model.update(QJsonArray{QJsonObject{{"name", "slow"}, {"oldest_ready_age_ms", 12345}},
                            QJsonObject{{"name", "idle"}, {"oldest_ready_age_ms", 0}},
                            QJsonObject{{"name", "old"}, {"oldest_ready_age_ms", 90000}}});
    const auto age = [&](const char *queue, int role) {
        return model.index(model.rowOf(queue), QueueTableModel::OldestReadyAge).data(role);
    };
    QCOMPARE(age("slow", Qt::DisplayRole).toString(), QStringLiteral("12.3"));
    QCOMPARE(age("old", Qt::DisplayRole).toString(), QStringLiteral("90"));
    QCOMPARE(age("idle", Qt::DisplayRole).toString(), QStringLiteral("0"));
    // Sorts by time: 90 s after 12.3 s.
    QVERIFY(age("old", JsonTableModel::SortRole).toDouble() >
            age("slow", JsonTableModel::SortRole).toDouble());
    QCOMPARE(model.headerData(QueueTableModel::OldestReadyAge, Qt::Horizontal, Qt::DisplayRole)
                 .toString(),
             QStringLiteral("Oldest\nready (s)"));
}

void tst_QueueTableModel::modelTester()
{
    QueueTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.update(queues("a:1,b:2,c:3"));
    model.update(queues("c:4,d:5"));
    model.update(queues(""));
}

QTEST_GUILESS_MAIN(tst_QueueTableModel)
#include "tst_queuetablemodel.moc"
