#include "models/talkertablemodel.h"

#include <algorithm>
#include <utility>

namespace cmq::admingui {

TalkerTableModel::TalkerTableModel(QObject *parent) : JsonTableModel(parent)
{
}

TalkerTableModel::Rates TalkerTableModel::ratesOver(const QList<Totals> &samples)
{
    if (samples.size() < 2)
        return {};
    const Totals &first = samples.first();
    const Totals &last = samples.last();
    const double elapsed = last.seconds - first.seconds;
    if (elapsed <= 0)
        return {};
    return Rates{(last.publishes - first.publishes) / elapsed,
                 (last.deliveries - first.deliveries) / elapsed,
                 (last.bytesIn - first.bytesIn) / elapsed,
                 (last.bytesOut - first.bytesOut) / elapsed};
}

void TalkerTableModel::updateTalkers(const QJsonArray &talkers, double seconds, bool showRows)
{
    if (!showRows && m_sampledAt >= 0 && seconds >= m_sampledAt &&
        seconds - m_sampledAt < HiddenSampleSeconds) {
        // Hidden, and sampled a moment ago: kept for showPendingRows(), not folded in yet.
        m_pendingRows = talkers;
        m_pendingSeconds = seconds;
        m_pendingSampled = false;
        m_rowsPending = true;
        return;
    }
    m_sampledAt = seconds;
    QHash<QString, QList<Totals>> samples;
    QHash<QString, Rates> rates;
    QHash<QString, QList<TalkerRatePoint>> history;
    bool brokerRates = false;
    samples.reserve(talkers.size());
    rates.reserve(talkers.size());
    history.reserve(talkers.size());
    for (const QJsonValue &value : talkers) {
        const QJsonObject row = value.toObject();
        const QString cn = row.value(u"cn").toString();
        const Totals now{seconds, row.value(u"publishes").toDouble(),
                         row.value(u"deliveries").toDouble(), row.value(u"bytes_in").toDouble(),
                         row.value(u"bytes_out").toDouble()};
        // Taken, not copied: appending to a shared list would copy it for every CN.
        QList<Totals> kept = m_samples.take(cn);
        QList<TalkerRatePoint> points = m_history.take(cn);
        // Totals that went back (the broker restarted, or forgot the identity while it was
        // idle and counts it from zero again) start the identity's figures afresh.
        if (!kept.isEmpty() &&
            (seconds < kept.last().seconds || now.publishes < kept.last().publishes ||
             now.deliveries < kept.last().deliveries)) {
            kept.clear();
            points.clear();
        }
        kept.append(now);
        qsizetype stale = 0;
        while (kept.size() - stale > 2 && seconds - kept[stale + 1].seconds >= m_windowSeconds)
            ++stale;
        kept.remove(0, stale);
        // A page from the broker carries the broker's rates (over its last 10 s), which the
        // page is ordered by: shown as they are, the rows agree with that order.
        const Rates rate = row.contains(u"publish_rate")
                               ? Rates{row.value(u"publish_rate").toDouble(),
                                       row.value(u"deliver_rate").toDouble(),
                                       row.value(u"bytes_in_rate").toDouble(),
                                       row.value(u"bytes_out_rate").toDouble()}
                               : ratesOver(kept);
        brokerRates = brokerRates || row.contains(u"publish_rate");
        points.append(TalkerRatePoint{seconds, rate.publish, rate.deliver});
        // Trimmed a slice at a time (history() returns the newest HistoryPoints), not one
        // point per snapshot: moving 300 points of 5,000 identities every second adds up.
        if (points.size() > HistoryPoints + HistoryPoints / 4)
            points.remove(0, points.size() - HistoryPoints);
        samples.insert(cn, std::move(kept));
        rates.insert(cn, rate);
        history.insert(cn, std::move(points));
    }
    m_samples = std::move(samples);
    m_history = std::move(history);
    m_brokerRates = brokerRates;
    if (!showRows) {
        // m_previousRates stays what the rows show, for showPendingRows().
        m_rates = std::move(rates);
        m_pendingRows = talkers;
        m_pendingSeconds = seconds;
        m_pendingSampled = true;
        m_rowsPending = true;
        return;
    }
    m_previousRates = std::exchange(m_rates, std::move(rates));
    m_pendingRows = {};
    m_rowsPending = false;
    update(talkers);
}

void TalkerTableModel::showPendingRows()
{
    if (!std::exchange(m_rowsPending, false))
        return;
    m_redrawAll = true;
    if (m_pendingSampled)
        update(std::exchange(m_pendingRows, {}));
    else // the newest snapshot, folded in now: the rates reach up to it
        updateTalkers(std::exchange(m_pendingRows, {}), m_pendingSeconds, true);
    m_redrawAll = false;
    m_previousRates = m_rates;
}

QList<TalkerRatePoint> TalkerTableModel::history(const QString &cn) const
{
    const QList<TalkerRatePoint> points = m_history.value(cn);
    return points.size() > HistoryPoints ? points.last(HistoryPoints) : points;
}

void TalkerTableModel::clear()
{
    m_samples.clear();
    m_brokerRates = false;
    m_rates.clear();
    m_previousRates.clear();
    m_history.clear();
    m_pendingRows = {};
    m_rowsPending = false;
    m_sampledAt = -1;
    update({});
}

QStringList TalkerTableModel::topTalkers(int n) const
{
    QList<std::pair<double, QString>> busy;
    for (auto it = m_rates.cbegin(); it != m_rates.cend(); ++it) {
        const double total = it->publish + it->deliver;
        if (total > 0)
            busy.append({-total, it.key()});
    }
    std::sort(busy.begin(), busy.end());
    QStringList names;
    for (qsizetype i = 0; i < busy.size() && i < n; ++i)
        names.append(busy[i].second);
    return names;
}

QString TalkerTableModel::keyOf(const QJsonObject &row) const
{
    return row.value(u"cn").toString();
}

QStringList TalkerTableModel::headers() const
{
    return {tr("CN"),          tr("Connections"), tr("Publish /s"), tr("Deliver /s"),
            tr("Bytes in /s"), tr("Bytes out /s"), tr("Published"), tr("Delivered"),
            tr("Bytes in"),    tr("Bytes out"),   tr("Idle (s)")};
}

QVariant TalkerTableModel::cell(const QJsonObject &row, int column) const
{
    const Rates rate = m_rates.value(row.value(u"cn").toString());
    switch (column) {
    case Cn:
        return row.value(u"cn").toString();
    case Connections:
        return row.value(u"connections").toDouble();
    case PublishRate:
        return rate.publish;
    case DeliverRate:
        return rate.deliver;
    case BytesInRate:
        return rate.bytesIn;
    case BytesOutRate:
        return rate.bytesOut;
    case Publishes:
        return row.value(u"publishes").toDouble();
    case Deliveries:
        return row.value(u"deliveries").toDouble();
    case BytesIn:
        return row.value(u"bytes_in").toDouble();
    case BytesOut:
        return row.value(u"bytes_out").toDouble();
    case Idle:
        return row.value(u"idle_seconds").toDouble();
    default:
        return {};
    }
}

bool TalkerTableModel::rowDiffers(const QString &key, const QJsonObject &before,
                                  const QJsonObject &after) const
{
    return m_redrawAll || m_rates.value(key) != m_previousRates.value(key) || before != after;
}

} // namespace cmq::admingui
