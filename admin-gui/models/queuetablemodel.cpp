#include "models/queuetablemodel.h"

#include <cmath>
#include <utility>

#include <QBrush>

#include "models/palettecolors.h"

namespace cmq::admingui {

QueueTableModel::QueueTableModel(QObject *parent) : JsonTableModel(parent)
{
}

void QueueTableModel::updateQueues(const QJsonArray &queues, double seconds)
{
    const double elapsed = m_previousSeconds >= 0 ? seconds - m_previousSeconds : 0;
    QHash<QString, Totals> current;
    QHash<QString, Rates> rates;
    QHash<QString, LagChange> trends;
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
        if (m_history)
            trends.insert(name, lagTrendOf(*m_history, name));
    }
    m_previous = std::move(current);
    m_previousSeconds = seconds;
    m_previousRates = std::exchange(m_rates, std::move(rates));
    m_previousTrends = std::exchange(m_trends, std::move(trends));
    update(queues);
}

bool QueueTableModel::rowDiffers(const QString &key, const QJsonObject &before,
                                 const QJsonObject &after) const
{
    return m_rates.value(key) != m_previousRates.value(key) ||
           m_trends.value(key).trend != m_previousTrends.value(key).trend || before != after;
}

QString QueueTableModel::keyOf(const QJsonObject &row) const
{
    return row.value(u"name").toString();
}

QStringList QueueTableModel::headers() const
{
    // Short headers, two lines where a word pair is wider than the column's numbers (their
    // tooltips say more): with Limit and Overflow hidden by default (the window's choice, see
    // MainWindow::addQueueTrendColumns) the rest fit a 1280-pixel window.
    return {tr("Name"),  tr("Owner"),   tr("Ready"),   tr("Oldest\nready (s)"),
            tr("Trend"), tr("Depth"),   tr("Unacked"), tr("Consumers"),
            tr("In/s"),  tr("Out/s"),   tr("Evicted"), tr("Limit"),
            tr("Overflow"), tr("TTL (s)"), tr("DLX"),  tr("Delivery\nlimit")};
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
    case LagTrendColumn:
        return double(int(m_trends.value(row.value(u"name").toString()).trend));
    case Depth:
        return row.value(u"ready").toDouble() + row.value(u"unacked").toDouble();
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
    case MessageTtl:
        return row.value(u"message_ttl_ms").toDouble() / 1000.0;
    case DeadLetter: {
        const QString exchange = row.value(u"dead_letter_exchange").toString();
        const QString key = row.value(u"dead_letter_routing_key").toString();
        return exchange.isEmpty() || key.isEmpty() ? exchange
                                                   : QStringLiteral("%1 → %2").arg(exchange, key);
    }
    case DeliveryLimit:
        return row.value(u"delivery_limit").toDouble();
    default:
        return {};
    }
}

QVariant QueueTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole) {
        switch (section) {
        case Name:
            return tr("The queue's name");
        case Owner:
            return tr("The client identity (CN) that declared the queue");
        case Ready:
            return tr("Messages waiting to be delivered");
        case Unacked:
            return tr("Messages delivered and not acknowledged yet");
        case Consumers:
            return tr("Connections consuming from the queue");
        case PublishRate:
            return tr("Publish rate: messages published to the queue per second, between the "
                      "last two snapshots");
        case DeliverRate:
            return tr("Deliver rate: messages delivered from the queue per second, between the "
                      "last two snapshots");
        case Evicted:
            return tr("Messages dropped from the head to stay within the queue's limits "
                      "(drop-head)");
        case Overflow:
            return tr("What happens at the length limit: drop-head drops the oldest, "
                      "reject-publish refuses the new message");
        case OldestReadyAge:
            return tr("Lag as time: how long the next message to be delivered has waited");
        case LagTrendColumn:
            return tr("Whether the lag is growing, shrinking or steady over the last %1 s")
                .arg(LagTrendWindowSeconds);
        case Depth:
            return tr("Ready + unacked messages, with their last snapshots drawn as a line");
        case Limit:
            return tr("The queue's length limit (max_length)");
        case MessageTtl:
            return tr("Message TTL in seconds (none: messages do not expire)");
        case DeadLetter:
            return tr("Dead-letter exchange (→ routing key, when the queue sets one)");
        case DeliveryLimit:
            return tr("Deliveries without an ack before a message is dead-lettered");
        default:
            break;
        }
    }
    return JsonTableModel::headerData(section, orientation, role);
}

QVariant QueueTableModel::displayText(const QVariant &value, int column) const
{
    switch (column) {
    case LagTrendColumn:
        return lagTrendText(LagTrend(value.toInt()));
    case MessageTtl:
    case DeliveryLimit:
        // 0 is "no TTL" / "no limit" in the protocol, not "expire at once".
        if (value.toDouble() == 0)
            return tr("none");
        if (column == MessageTtl)
            return QString::number(value.toDouble(), 'g', 6);
        break;
    default:
        break;
    }
    return JsonTableModel::displayText(value, column);
}

QVariant QueueTableModel::extraData(const QJsonObject &row, int column, int role) const
{
    if (role == Qt::ForegroundRole && column == LagTrendColumn &&
        m_trends.value(row.value(u"name").toString()).trend == LagTrend::Growing)
        return QBrush(errorText()); // a backlog building up is what an operator looks for
    if (role == Qt::ToolTipRole && column == LagTrendColumn) {
        const LagChange change = m_trends.value(row.value(u"name").toString());
        if (change.trend == LagTrend::Unknown)
            return tr("Not enough snapshots yet to tell a trend");
        const double perSecond = change.msPerSecond / 1000.0;
        return tr("Lag %1: %2 s per second over the last %3 s")
            .arg(lagTrendText(change.trend),
                 (perSecond >= 0 ? QStringLiteral("+") : QString()) +
                     QString::number(perSecond, 'f', 2),
                 QString::number(change.overSeconds, 'f', 0));
    }
    if (role == Qt::ToolTipRole && column == DeadLetter) {
        const QString exchange = row.value(u"dead_letter_exchange").toString();
        if (exchange.isEmpty())
            return tr("No dead-letter exchange set");
        const QString key = row.value(u"dead_letter_routing_key").toString();
        return key.isEmpty()
                   ? tr("Dead letters go to exchange '%1' with their own routing key").arg(exchange)
                   : tr("Dead letters go to exchange '%1' with routing key '%2'")
                         .arg(exchange, key);
    }
    return JsonTableModel::extraData(row, column, role);
}

} // namespace cmq::admingui
