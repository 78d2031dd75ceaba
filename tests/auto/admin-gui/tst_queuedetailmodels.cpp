// The queue detail view's models, table-driven: QueueBindingModel keeps the bindings that
// route into the queue, QueueConsumerModel the connections that consume from it.

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonObject>
#include <QtTest>

#include "models/queuebindingmodel.h"
#include "models/queueconsumermodel.h"

using cmq::admingui::QueueBindingModel;
using cmq::admingui::QueueConsumerModel;

namespace {

// "ex/key/queue;..." → binding objects.
QJsonArray bindings(const QString &spec)
{
    QJsonArray array;
    for (const QString &item : spec.split(';', Qt::SkipEmptyParts)) {
        const QStringList parts = item.split('/');
        array.append(
            QJsonObject{{"exchange", parts[0]}, {"routing_key", parts[1]}, {"queue", parts[2]}});
    }
    return array;
}

// "7:q1+q2;8:;9:q2" → connections 7 (consuming q1 and q2), 8 (none), 9 (q2).
QJsonArray connections(const QString &spec)
{
    QJsonArray array;
    for (const QString &item : spec.split(';', Qt::SkipEmptyParts)) {
        const QStringList parts = item.split(':');
        QJsonArray consumers;
        for (const QString &queue : parts[1].split('+', Qt::SkipEmptyParts))
            consumers.append(queue);
        array.append(QJsonObject{{"id", parts[0].toInt()},
                                 {"cn", "receiver_" + parts[0]},
                                 {"address", "127.0.0.1"},
                                 {"port", 40000 + parts[0].toInt()},
                                 {"connected_at", "2025-01-31T10:00:00.123Z"},
                                 {"prefetch", 256},
                                 {"unacked", 3},
                                 {"messages_out", 108},
                                 {"slow", false},
                                 {"consumers", consumers}});
    }
    return array;
}

QStringList column(const QAbstractItemModel &model, int column)
{
    QStringList list;
    for (int row = 0; row < model.rowCount(); ++row)
        list.append(model.index(row, column).data().toString());
    return list;
}

} // namespace

class tst_QueueDetailModels : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void bindingsOfQueue_data();
    void bindingsOfQueue();
    void consumersOfQueue_data();
    void consumersOfQueue();
    void consumerColumns();
    void modelTester();
};

void tst_QueueDetailModels::bindingsOfQueue_data()
{
    QTest::addColumn<QString>("bindings");
    QTest::addColumn<QStringList>("exchanges");
    QTest::addColumn<QStringList>("keys");

    QTest::newRow("none") << "" << QStringList{} << QStringList{};
    QTest::newRow("only other queues") << "ex/k/other" << QStringList{} << QStringList{};
    QTest::newRow("one of several")
        << "ex/k1/q;ex/k2/other" << QStringList{"ex"} << QStringList{"k1"};
    QTest::newRow("two keys, two exchanges")
        << "a/k1/q;b/k2/q;b/k3/other" << QStringList{"a", "b"} << QStringList{"k1", "k2"};
    QTest::newRow("same key on two exchanges")
        << "a/k/q;b/k/q" << QStringList{"a", "b"} << QStringList{"k", "k"};
}

void tst_QueueDetailModels::bindingsOfQueue()
{
    QFETCH(QString, bindings);
    QFETCH(QStringList, exchanges);
    QFETCH(QStringList, keys);
    QueueBindingModel model;
    model.updateBindings(::bindings(bindings), "q");
    QCOMPARE(column(model, QueueBindingModel::Exchange), exchanges);
    QCOMPARE(column(model, QueueBindingModel::RoutingKey), keys);
}

void tst_QueueDetailModels::consumersOfQueue_data()
{
    QTest::addColumn<QString>("connections");
    QTest::addColumn<QStringList>("ids");

    QTest::newRow("no connections") << "" << QStringList{};
    QTest::newRow("nobody consumes it") << "7:other;8:" << QStringList{};
    QTest::newRow("one of several queues") << "7:other+q;8:other" << QStringList{"7"};
    QTest::newRow("two consumers") << "7:q;8:;9:q" << QStringList{"7", "9"};
    QTest::newRow("prefix is not a match") << "7:q_1;8:qq" << QStringList{};
}

void tst_QueueDetailModels::consumersOfQueue()
{
    QFETCH(QString, connections);
    QFETCH(QStringList, ids);
    QueueConsumerModel model;
    model.updateConsumers(::connections(connections), "q");
    QCOMPARE(column(model, QueueConsumerModel::Id), ids);
}

void tst_QueueDetailModels::consumerColumns()
{
    QueueConsumerModel model;
    model.updateConsumers(::connections("7:q"), "q");
    QCOMPARE(model.columnCount(), int(QueueConsumerModel::ColumnCount));
    const auto text = [&](int column) { return model.index(0, column).data().toString(); };
    QCOMPARE(text(QueueConsumerModel::Cn), QStringLiteral("receiver_7"));
    QCOMPARE(text(QueueConsumerModel::Address), QStringLiteral("127.0.0.1:40007"));
    QCOMPARE(text(QueueConsumerModel::ConnectedSince), QStringLiteral("2025-01-31 10:00:00"));
    QCOMPARE(text(QueueConsumerModel::Prefetch), QStringLiteral("256"));
    QCOMPARE(text(QueueConsumerModel::Unacked), QStringLiteral("3"));
    QCOMPARE(text(QueueConsumerModel::MessagesOut), QStringLiteral("108"));
    QCOMPARE(text(QueueConsumerModel::Slow), QStringLiteral("no"));
}

void tst_QueueDetailModels::modelTester()
{
    QueueBindingModel bindingModel;
    QueueConsumerModel consumerModel;
    QAbstractItemModelTester bindingTester(&bindingModel,
                                           QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester consumerTester(&consumerModel,
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
    for (const char *spec : {"a/k/q", "a/k/q;b/k/q", "b/k/q", ""})
        bindingModel.updateBindings(bindings(spec), "q");
    for (const char *spec : {"7:q", "7:q;8:q", "8:q;9:q", ""})
        consumerModel.updateConsumers(connections(spec), "q");
}

QTEST_MAIN(tst_QueueDetailModels)
#include "tst_queuedetailmodels.moc"
