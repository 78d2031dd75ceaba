// The Audit tab's model: one row per audit entry keyed by its id, times shown without the ISO
// separators, failed and refused actions drawn as failures, rows that left the broker's ring
// leave the table.

#include <QBrush>
#include <QJsonArray>
#include <QJsonObject>
#include <QtTest>

#include "models/audittablemodel.h"

using cmq::admingui::AuditTableModel;

namespace {

QJsonObject entry(qint64 id, const QString &result, const QString &target = "receiver_1_q")
{
    return QJsonObject{{"id", id},
                       {"time", "2026-12-01T14:05:06.789Z"},
                       {"cn", "ops-admin"},
                       {"address", "127.0.0.1"},
                       {"action", "purge"},
                       {"target", target},
                       {"result", result},
                       {"detail", result == "ok" ? "purged=3" : "Queue not found"}};
}

} // namespace

class tst_AuditTableModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void columns();
    void failuresAreMarked();
    void followsTheRing();
};

void tst_AuditTableModel::columns()
{
    AuditTableModel model;
    model.update(QJsonArray{entry(7, "ok")});
    QCOMPARE(model.columnCount(), int(AuditTableModel::ColumnCount));
    QCOMPARE(model.rowCount(), 1);
    const auto text = [&](int column) { return model.index(0, column).data().toString(); };
    QCOMPARE(text(AuditTableModel::Id), QStringLiteral("7"));
    QCOMPARE(text(AuditTableModel::Time), QStringLiteral("2026-12-01 14:05:06"));
    QCOMPARE(text(AuditTableModel::Admin), QStringLiteral("ops-admin"));
    QCOMPARE(text(AuditTableModel::Address), QStringLiteral("127.0.0.1"));
    QCOMPARE(text(AuditTableModel::Action), QStringLiteral("purge"));
    QCOMPARE(text(AuditTableModel::Target), QStringLiteral("receiver_1_q"));
    QCOMPARE(text(AuditTableModel::Result), QStringLiteral("ok"));
    QCOMPARE(text(AuditTableModel::Detail), QStringLiteral("purged=3"));
    QCOMPARE(model.headerData(AuditTableModel::Admin, Qt::Horizontal, Qt::DisplayRole).toString(),
             QStringLiteral("Admin"));
    // Sorted by number, not by text: entry 10 comes after entry 9.
    QCOMPARE(model.index(0, AuditTableModel::Id).data(AuditTableModel::SortRole).typeId(),
             QMetaType::LongLong);
}

void tst_AuditTableModel::failuresAreMarked()
{
    AuditTableModel model;
    model.update(QJsonArray{entry(1, "ok"), entry(2, "error"), entry(3, "refused")});
    QVERIFY(!model.isFailure(0));
    QVERIFY(model.isFailure(1));
    QVERIFY(model.isFailure(2));
    QVERIFY(!model.index(0, AuditTableModel::Result).data(Qt::ForegroundRole).isValid());
    QVERIFY(model.index(2, AuditTableModel::Detail).data(Qt::ForegroundRole).canConvert<QBrush>());
}

void tst_AuditTableModel::followsTheRing()
{
    AuditTableModel model;
    model.update(QJsonArray{entry(1, "ok"), entry(2, "ok")});
    // The broker's ring moved on: 1 fell out, 3 came in; 2 keeps its row.
    model.update(QJsonArray{entry(2, "ok"), entry(3, "error", "receiver_1_x")});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.rowOf("1"), -1);
    QVERIFY(model.rowOf("2") >= 0);
    QCOMPARE(model.index(model.rowOf("3"), AuditTableModel::Target).data().toString(),
             QStringLiteral("receiver_1_x"));
}

QTEST_MAIN(tst_AuditTableModel)
#include "tst_audittablemodel.moc"
