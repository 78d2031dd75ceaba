#pragma once
// Top talkers: one row per client CN from the snapshot's "talkers" list, with publish/s and
// deliver/s averaged over the last minute of snapshots (the whole list carries totals only) or,
// for a page of the list, the broker's own rates over its last 10 s; and the recent history of
// those rates for the chart of the busiest identities.

#include <QHash>
#include <QList>

#include "models/jsontablemodel.h"

namespace cmq::admingui {

// One identity's rates at one snapshot.
struct TalkerRatePoint
{
    double seconds = 0; // broker uptime at the snapshot
    double publish = 0;
    double deliver = 0;
};

class TalkerTableModel final : public JsonTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TalkerTableModel)

public:
    enum Column {
        Cn,
        Connections,
        PublishRate,
        DeliverRate,
        BytesInRate,
        BytesOutRate,
        Publishes,
        Deliveries,
        BytesIn,
        BytesOut,
        Idle,
        ColumnCount
    };
    // Rates average the totals' change over this many seconds of snapshots...
    static constexpr double DefaultWindowSeconds = 60;
    // ...and the chart keeps this many points per identity (5 minutes at one a second).
    static constexpr int HistoryPoints = 300;
    // While the table is hidden, a snapshot is folded into the rates only this many seconds
    // after the last one folded in (the others wait, the newest for showPendingRows()): the
    // rates are differences of totals, so they stay exact; the chart's points are sparser.
    static constexpr double HiddenSampleSeconds = 5;

    explicit TalkerTableModel(QObject *parent = nullptr);

    void setWindowSeconds(double seconds) { m_windowSeconds = seconds; }
    // `seconds`: the snapshot's broker uptime (monotonic within one broker run). With
    // `showRows` false (the Talkers tab hidden) only the rates and their history follow the
    // snapshot (every HiddenSampleSeconds), which is cheap; the table's rows wait for
    // showPendingRows().
    void updateTalkers(const QJsonArray &talkers, double seconds, bool showRows = true);
    // The rows of the newest snapshot, when updateTalkers() left them out.
    void showPendingRows();
    bool rowsPending() const { return m_rowsPending; }
    void clear();

    // The rates shown are the broker's (a page of the list), not the minute's averages here.
    bool brokerRates() const { return m_brokerRates; }
    double publishRate(const QString &cn) const { return m_rates.value(cn).publish; }
    double deliverRate(const QString &cn) const { return m_rates.value(cn).deliver; }
    // The `n` identities with the highest publish + deliver rate now, busiest first (ties by
    // CN), leaving out the idle ones.
    QStringList topTalkers(int n) const;
    // That identity's rates, oldest first.
    QList<TalkerRatePoint> history(const QString &cn) const;

protected:
    QString keyOf(const QJsonObject &row) const override;
    QStringList headers() const override;
    QVariant cell(const QJsonObject &row, int column) const override;
    bool rowDiffers(const QString &key, const QJsonObject &before,
                    const QJsonObject &after) const override;

private:
    struct Totals
    {
        double seconds = 0;
        double publishes = 0;
        double deliveries = 0;
        double bytesIn = 0;
        double bytesOut = 0;
    };
    struct Rates
    {
        double publish = 0;
        double deliver = 0;
        double bytesIn = 0;
        double bytesOut = 0;
        bool operator==(const Rates &) const = default;
    };
    static Rates ratesOver(const QList<Totals> &samples);

    double m_windowSeconds = DefaultWindowSeconds;
    QHash<QString, QList<Totals>> m_samples; // per CN, within the window, oldest first
    QHash<QString, Rates> m_rates;
    QHash<QString, Rates> m_previousRates;
    QHash<QString, QList<TalkerRatePoint>> m_history;
    QJsonArray m_pendingRows;
    double m_pendingSeconds = 0;
    double m_sampledAt = -1;      // the uptime last folded into the rates
    bool m_pendingSampled = false; // m_pendingRows were folded in (only the rows wait)
    bool m_rowsPending = false;
    bool m_redrawAll = false; // while showing pending rows: every rate may have moved
    bool m_brokerRates = false;
};

} // namespace cmq::admingui
