#pragma once
// Exchange → binding (routing key) → queue, from the snapshot's "exchanges" and "bindings".
// Topology changes rarely, so the tree is rebuilt only when the lists differ from last time.

#include <QJsonArray>
#include <QStandardItemModel>

namespace cmq::admingui {

class ExchangeTreeModel final : public QStandardItemModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ExchangeTreeModel)

public:
    explicit ExchangeTreeModel(QObject *parent = nullptr);

    // Returns whether the tree was rebuilt.
    bool updateTopology(const QJsonArray &exchanges, const QJsonArray &bindings);

private:
    QJsonArray m_exchanges;
    QJsonArray m_bindings;
};

} // namespace cmq::admingui
