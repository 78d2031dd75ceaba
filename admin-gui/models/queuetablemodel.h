#pragma once
// Queues from the snapshot's "queues" list. The protocol gives per-queue totals only, so the
// publish/deliver rates are derived here from the change between two snapshots, and the lag's
// trend from the console's depth history.

#include <QHash>

#include "models/jsontablemodel.h"
#include "models/lagtrend.h"

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
        LagTrendColumn, // growing / steady / shrinking; sorts growing first when descending
        Depth,          // ready + unacked; the window paints it as a sparkline of its history
        Unacked,
        Consumers,
        PublishRate,
        DeliverRate,
        Evicted,
        Limit,
        Overflow,
        MessageTtl,    // seconds; "none" for 0
        DeadLetter,    // the dead-letter exchange, "→ key" when the queue sets one
        DeliveryLimit, // "none" for 0
        ColumnCount
    };

    explicit QueueTableModel(QObject *parent = nullptr);

    // Where the lag trend comes from; the caller adds each snapshot to it before
    // updateQueues(). Without one the trend stays unknown.
    void setDepthHistory(const QueueDepthHistory *history) { m_history = history; }
    LagChange lagChange(const QString &queue) const { return m_trends.value(queue); }
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

    // `seconds`: the snapshot's time, for the rates (monotonic within one broker run).
    void updateQueues(const QJsonArray &queues, double seconds);
    // Messages per second between the last two snapshots (0 for a queue seen once).
    double publishRate(const QString &queue) const { return m_rates.value(queue).publish; }
    double deliverRate(const QString &queue) const { return m_rates.value(queue).deliver; }

protected:
    QString keyOf(const QJsonObject &row) const override;
    QStringList headers() const override;
    QVariant cell(const QJsonObject &row, int column) const override;
    QVariant extraData(const QJsonObject &row, int column, int role) const override;
    QVariant displayText(const QVariant &value, int column) const override;
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
    const QueueDepthHistory *m_history = nullptr;
    QHash<QString, LagChange> m_trends;
    QHash<QString, LagChange> m_previousTrends;
    double m_previousSeconds = -1;
};

} // namespace cmq::admingui
