#include "models/exchangetreemodel.h"

#include <QHash>
#include <QJsonObject>

namespace cmq::admingui {

ExchangeTreeModel::ExchangeTreeModel(QObject *parent) : QStandardItemModel(parent)
{
    setHorizontalHeaderLabels({tr("Exchange / routing key / queue"), tr("Type"), tr("Creator")});
}

bool ExchangeTreeModel::updateTopology(const QJsonArray &exchanges, const QJsonArray &bindings)
{
    if (exchanges == m_exchanges && bindings == m_bindings && rowCount() > 0)
        return false;
    m_exchanges = exchanges;
    m_bindings = bindings;
    removeRows(0, rowCount());

    QHash<QString, QStandardItem *> byName;
    for (const QJsonValue &value : exchanges) {
        const QJsonObject exchange = value.toObject();
        const QString name = exchange.value("name").toString();
        auto *item = new QStandardItem(name);
        item->setEditable(false);
        auto *type = new QStandardItem(exchange.value("type").toString());
        auto *creator = new QStandardItem(exchange.value("creator").toString());
        type->setEditable(false);
        creator->setEditable(false);
        appendRow({item, type, creator});
        byName.insert(name, item);
    }
    for (const QJsonValue &value : bindings) {
        const QJsonObject binding = value.toObject();
        QStandardItem *exchange = byName.value(binding.value("exchange").toString());
        if (!exchange) // a binding can outlive nothing, but never trust the order of two lists
            continue;
        const QString key = binding.value("routing_key").toString();
        QStandardItem *keyItem = nullptr;
        for (int row = 0; row < exchange->rowCount(); ++row) {
            if (exchange->child(row)->text() == key)
                keyItem = exchange->child(row);
        }
        if (!keyItem) {
            keyItem = new QStandardItem(key);
            keyItem->setEditable(false);
            keyItem->setToolTip(tr("routing key"));
            exchange->appendRow({keyItem, new QStandardItem(tr("binding")), new QStandardItem});
        }
        auto *queue = new QStandardItem(binding.value("queue").toString());
        queue->setEditable(false);
        keyItem->appendRow({queue, new QStandardItem(tr("queue")), new QStandardItem});
    }
    return true;
}

} // namespace cmq::admingui
