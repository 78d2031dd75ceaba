#pragma once
// The Talkers tab: who floods the broker. A sortable table of the client identities (CN) with
// publish/s and deliver/s averaged over the last minute (or, from 1,000 identities on, a page
// of the busiest with the broker's rates), busiest first, over a chart of the top few
// identities' message rates over the last minutes.

#include <QList>
#include <QWidget>

#include "models/talkertablemodel.h"

QT_BEGIN_NAMESPACE
class QChartView;
class QLineSeries;
class QValueAxis;
QT_END_NAMESPACE

namespace cmq::admingui {

class TablePage;

class TalkersPage final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TalkersPage)

public:
    // The chart draws this many identities, the busiest.
    static constexpr int ChartedTalkers = 5;

    explicit TalkersPage(QWidget *parent = nullptr);

    // The snapshot's "talkers" at broker uptime `seconds`. While the tab is hidden (`shown`
    // false) only the rates' history follows; showPending() brings table and chart up to date
    // when the tab is opened.
    void showTalkers(const QJsonArray &talkers, double seconds, bool shown = true);
    void showPending();
    TalkerTableModel &model() { return m_model; }
    TablePage *table() { return m_table; }
    // The CN of each drawn line, busiest first (its series' names), for tests.
    QStringList chartedNames() const;

private:
    static QString chartTitle(bool brokerRates);
    void refreshChart(double now);

    TalkerTableModel m_model;
    TablePage *m_table;
    QChartView *m_chart;
    QList<QLineSeries *> m_lines;
    QValueAxis *m_x;
    QValueAxis *m_y;
    double m_seconds = 0; // of the newest snapshot
    bool m_chartPending = false;
};

} // namespace cmq::admingui
