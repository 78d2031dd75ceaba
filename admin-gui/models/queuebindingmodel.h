#pragma once
// The bindings that route into one queue (exchange and routing key), picked from the
// snapshot's "bindings" list, for the queue detail view.

#include "models/jsontablemodel.h"

namespace cmq::admingui {

class QueueBindingModel final : public JsonTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(QueueBindingModel)

public:
    enum Column { Exchange, RoutingKey, ColumnCount };

    explicit QueueBindingModel(QObject *parent = nullptr);

    void updateBindings(const QJsonArray &bindings, const QString &queue);

protected:
    QString keyOf(const QJsonObject &row) const override;
    QStringList headers() const override;
    QVariant cell(const QJsonObject &row, int column) const override;
};

} // namespace cmq::admingui
