#include "models/queuebindingmodel.h"

namespace cmq::admingui {

QueueBindingModel::QueueBindingModel(QObject *parent) : JsonTableModel(parent)
{
}

void QueueBindingModel::updateBindings(const QJsonArray &bindings, const QString &queue)
{
    QJsonArray mine;
    for (const QJsonValue &value : bindings) {
        const QJsonObject binding = value.toObject();
        if (binding.value(u"queue").toString() == queue)
            mine.append(binding);
    }
    update(mine);
}

QString QueueBindingModel::keyOf(const QJsonObject &row) const
{
    return row.value(u"exchange").toString() + u'\n' + row.value(u"routing_key").toString();
}

QStringList QueueBindingModel::headers() const
{
    return {tr("Exchange"), tr("Routing key")};
}

QVariant QueueBindingModel::cell(const QJsonObject &row, int column) const
{
    switch (column) {
    case Exchange:
        return row.value(u"exchange").toString();
    case RoutingKey:
        return row.value(u"routing_key").toString();
    default:
        return {};
    }
}

} // namespace cmq::admingui
