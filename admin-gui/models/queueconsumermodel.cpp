#include "models/queueconsumermodel.h"

#include "models/connectionfields.h"

namespace cmq::admingui {

QueueConsumerModel::QueueConsumerModel(QObject *parent) : JsonTableModel(parent)
{
}

void QueueConsumerModel::updateConsumers(const QJsonArray &connections, const QString &queue)
{
    QJsonArray consuming;
    for (const QJsonValue &value : connections) {
        const QJsonObject connection = value.toObject();
        const QJsonArray consumers = connection.value(u"consumers").toArray();
        if (consumers.contains(queue))
            consuming.append(connection);
    }
    update(consuming);
}

QString QueueConsumerModel::keyOf(const QJsonObject &row) const
{
    return QString::number(row.value(u"id").toInteger());
}

QStringList QueueConsumerModel::headers() const
{
    return {tr("Connection"), tr("CN"),      tr("Address"),  tr("Connected since"),
            tr("Prefetch"),   tr("Unacked"), tr("Msgs out"), tr("Slow")};
}

QVariant QueueConsumerModel::cell(const QJsonObject &row, int column) const
{
    switch (column) {
    case Id:
        return row.value(u"id").toDouble();
    case Cn:
        return row.value(u"cn").toString();
    case Address:
        return connectionAddress(row);
    case ConnectedSince:
        return connectedSince(row);
    case Prefetch:
        return row.value(u"prefetch").toDouble();
    case Unacked:
        return row.value(u"unacked").toDouble();
    case MessagesOut:
        return row.value(u"messages_out").toDouble();
    case Slow:
        return row.value(u"slow").toBool() ? tr("yes") : tr("no");
    default:
        return {};
    }
}

} // namespace cmq::admingui
