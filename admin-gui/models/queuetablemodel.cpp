#include "models/queuetablemodel.h"

#include <cmath>
#include <utility>

namespace cmq::admingui {

QueueTableModel::QueueTableModel(QObject *parent) : JsonTableModel(parent)
{
}

void QueueTableModel::updateQueues(const QJsonArray &queues, double seconds)
{
    const double elapsed = m_previousSeconds >= 0 ? seconds - m_previousSeconds : 0;
    QHash<QString, Totals> current;
    QHash<QString, Rates> rates;
    current.reserve(queues.size());
    rates.reserve(queues.size());
    for (const QJsonValue &value : queues) {
        const QJsonObject queue = value.toObject();
        const QString name = queue.value(u"name").toString();
        const Totals totals{queue.value(u"published").toDouble(),
                            queue.value(u"delivered").toDouble()};
        Rates rate;
        const auto previous = m_previous.constFind(name);
        // A counter that went down means the queue was recreated or the broker restarted.
        if (elapsed > 0 && previous != m_previous.constEnd()) {
            rate.publish = std::max(0.0, (totals.published - previous->published) / elapsed);
            rate.deliver = std::max(0.0, (totals.delivered - previous->delivered) / elapsed);
        }
        current.insert(name, totals);
        rates.insert(name, rate);
    }
    m_previous = std::move(current);
    m_previousSeconds = seconds;
    m_previousRates = std::exchange(m_rates, std::move(rates));
    update(queues);
}

bool QueueTableModel::rowDiffers(const QString &key, const QJsonObject &before,
                                 const QJsonObject &after) const
{
    return m_rates.value(key) != m_previousRates.value(key) || before != after;
}

QString QueueTableModel::keyOf(const QJsonObject &row) const
{
    return row.value(u"name").toString();
}

QStringList QueueTableModel::headers() const
{
    return {tr("Name"),    tr("Owner"),     tr("Ready"),     tr("Oldest ready (s)"),
            tr("Unacked"), tr("Consumers"), tr("Publish/s"), tr("Deliver/s"),
            tr("Evicted"), tr("Limit"),     tr("Overflow")};
}

QVariant QueueTableModel::cell(const QJsonObject &row, int column) const
{
    switch (column) {
    case Name:
        return row.value(u"name").toString();
    case Owner:
        return row.value(u"owner").toString();
    case Ready:
        return row.value(u"ready").toDouble();
    case OldestReadyAge:
        // Tenths of a second: whole seconds show without decimals, a fresh backlog with one.
        return std::round(row.value(u"oldest_ready_age_ms").toDouble() / 100.0) / 10.0;
    case Unacked:
        return row.value(u"unacked").toDouble();
    case Consumers:
        return row.value(u"consumers").toDouble();
    case PublishRate:
        return m_rates.value(row.value(u"name").toString()).publish;
    case DeliverRate:
        return m_rates.value(row.value(u"name").toString()).deliver;
    case Evicted:
        return row.value(u"evicted").toDouble();
    case Limit:
        return row.value(u"max_length").toDouble();
    case Overflow:
        return row.value(u"overflow").toString();
    default:
        return {};
    }
}

} // namespace cmq::admingui
