#pragma once
// The connections consuming from one queue, picked from the snapshot's "connections" list
// (each lists the queues it consumes), for the queue detail view.

#include "models/jsontablemodel.h"

namespace cmq::admingui {

class QueueConsumerModel final : public JsonTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(QueueConsumerModel)

public:
    enum Column {
        Id,
        Cn,
        Address,
        ConnectedSince,
        Prefetch,
        Unacked,
        MessagesOut,
        Slow,
        ColumnCount
    };

    explicit QueueConsumerModel(QObject *parent = nullptr);

    void updateConsumers(const QJsonArray &connections, const QString &queue);

protected:
    QString keyOf(const QJsonObject &row) const override;
    QStringList headers() const override;
    QVariant cell(const QJsonObject &row, int column) const override;
};

} // namespace cmq::admingui
