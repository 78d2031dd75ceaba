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

    // The tree is built detached and added one exchange at a time: a row-inserted signal per
    // binding would make a large topology slow to show.
    QList<QList<QStandardItem *>> rows;
    QHash<QString, QStandardItem *> byName;
    QHash<QPair<QStandardItem *, QString>, QStandardItem *> keyItems; // (exchange, key) → item
    for (const QJsonValue &value : exchanges) {
        const QJsonObject exchange = value.toObject();
        const QString name = exchange.value("name").toString();
        auto *item = new QStandardItem(name);
        item->setEditable(false);
        auto *type = new QStandardItem(exchange.value("type").toString());
        auto *creator = new QStandardItem(exchange.value("creator").toString());
        type->setEditable(false);
        creator->setEditable(false);
        rows.append({item, type, creator});
        byName.insert(name, item);
    }
    for (const QJsonValue &value : bindings) {
        const QJsonObject binding = value.toObject();
        QStandardItem *exchange = byName.value(binding.value("exchange").toString());
        if (!exchange) // a binding can outlive nothing, but never trust the order of two lists
            continue;
        const QString key = binding.value("routing_key").toString();
        QStandardItem *&keyItem = keyItems[{exchange, key}];
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
    for (const QList<QStandardItem *> &row : std::as_const(rows))
        appendRow(row);
    return true;
}

} // namespace cmq::admingui
