#pragma once
// Queues from the snapshot's "queues" list. The protocol gives per-queue totals only, so the
// publish/deliver rates are derived here from the change between two snapshots.

#include <QHash>

#include "models/jsontablemodel.h"

namespace cmq::admingui {

class QueueTableModel final : public JsonTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(QueueTableModel)

public:
    enum Column {
        Name,
        Owner,
        Ready,
        OldestReadyAge, // seconds the next message to be delivered has waited
        Unacked,
        Consumers,
        PublishRate,
        DeliverRate,
        Evicted,
        Limit,
        Overflow,
        ColumnCount
    };

    explicit QueueTableModel(QObject *parent = nullptr);

    // `seconds`: the snapshot's time, for the rates (monotonic within one broker run).
    void updateQueues(const QJsonArray &queues, double seconds);
    // Messages per second between the last two snapshots (0 for a queue seen once).
    double publishRate(const QString &queue) const { return m_rates.value(queue).publish; }
    double deliverRate(const QString &queue) const { return m_rates.value(queue).deliver; }

protected:
    QString keyOf(const QJsonObject &row) const override;
    QStringList headers() const override;
    QVariant cell(const QJsonObject &row, int column) const override;
    bool rowDiffers(const QString &key, const QJsonObject &before,
                    const QJsonObject &after) const override;

private:
    struct Totals
    {
        double published = 0;
        double delivered = 0;
    };
    struct Rates
    {
        double publish = 0;
        double deliver = 0;
        bool operator==(const Rates &) const = default;
    };
    // Kept beside the rows (not written into the JSON objects, which would copy every one).
    QHash<QString, Totals> m_previous;
    QHash<QString, Rates> m_rates;
    QHash<QString, Rates> m_previousRates;
    double m_previousSeconds = -1;
};

} // namespace cmq::admingui
