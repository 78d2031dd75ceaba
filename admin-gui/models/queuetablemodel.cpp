#include "models/queuetablemodel.h"

namespace cmq::admingui {

QueueTableModel::QueueTableModel(QObject *parent) : JsonTableModel(parent) {}

void QueueTableModel::updateQueues(const QJsonArray &queues, double seconds)
{
    const double elapsed = m_previousSeconds >= 0 ? seconds - m_previousSeconds : 0;
    QHash<QString, Totals> current;
    QJsonArray rows;
    for (const QJsonValue &value : queues) {
        QJsonObject queue = value.toObject();
        const QString name = queue.value("name").toString();
        const Totals totals{queue.value("published").toDouble(),
                            queue.value("delivered").toDouble()};
        double publishRate = 0;
        double deliverRate = 0;
        const auto previous = m_previous.constFind(name);
        // A counter that went down means the queue was recreated or the broker restarted.
        if (elapsed > 0 && previous != m_previous.constEnd()) {
            publishRate = std::max(0.0, (totals.published - previous->published) / elapsed);
            deliverRate = std::max(0.0, (totals.delivered - previous->delivered) / elapsed);
        }
        queue.insert("publish_rate", publishRate);
        queue.insert("deliver_rate", deliverRate);
        current.insert(name, totals);
        rows.append(queue);
    }
    m_previous = std::move(current);
    m_previousSeconds = seconds;
    update(rows);
}

QString QueueTableModel::keyOf(const QJsonObject &row) const
{
    return row.value("name").toString();
}

QStringList QueueTableModel::headers() const
{
    return {tr("Name"),        tr("Owner"),       tr("Ready"),   tr("Unacked"),
            tr("Consumers"),   tr("Publish/s"),   tr("Deliver/s"), tr("Evicted"),
            tr("Limit"),       tr("Overflow")};
}

QVariant QueueTableModel::cell(const QJsonObject &row, int column) const
{
    switch (column) {
    case Name: return row.value("name").toString();
    case Owner: return row.value("owner").toString();
    case Ready: return row.value("ready").toDouble();
    case Unacked: return row.value("unacked").toDouble();
    case Consumers: return row.value("consumers").toDouble();
    case PublishRate: return row.value("publish_rate").toDouble();
    case DeliverRate: return row.value("deliver_rate").toDouble();
    case Evicted: return row.value("evicted").toDouble();
    case Limit: return row.value("max_length").toDouble();
    case Overflow: return row.value("overflow").toString();
    default: return {};
    }
}

} // namespace cmq::admingui
