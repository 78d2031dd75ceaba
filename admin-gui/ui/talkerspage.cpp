#include "ui/talkerspage.h"

#include <algorithm>
#include <utility>

#include <QChart>
#include <QChartView>
#include <QJsonArray>
#include <QLineSeries>
#include <QSplitter>
#include <QVBoxLayout>
#include <QValueAxis>

#include "models/palettecolors.h"
#include "ui/tablepage.h"

namespace cmq::admingui {

TalkersPage::TalkersPage(QWidget *parent)
    : QWidget(parent),
      m_table(new TablePage(&m_model, tr("Filter identities (CN)"))), m_x(new QValueAxis),
      m_y(new QValueAxis)
{
    // Busiest publisher first: the question this tab answers.
    m_table->view()->sortByColumn(TalkerTableModel::PublishRate, Qt::DescendingOrder);

    auto *chart = new QChart;
    chart->setTheme(isDarkPalette() ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setTitle(chartTitle(false));
    chart->legend()->setAlignment(Qt::AlignRight);
    m_x->setTitleText(tr("seconds ago"));
    m_x->setLabelFormat("%d");
    m_x->setRange(-60, 0);
    m_y->setLabelFormat("%.0f");
    m_y->setRange(0, 10);
    chart->addAxis(m_x, Qt::AlignBottom);
    chart->addAxis(m_y, Qt::AlignLeft);
    for (int i = 0; i < ChartedTalkers; ++i) {
        auto *line = new QLineSeries;
        chart->addSeries(line);
        line->attachAxis(m_x);
        line->attachAxis(m_y);
        line->setVisible(false); // until an identity is busy enough to be drawn
        m_lines.append(line);
    }
    m_chart = new QChartView(chart);
    m_chart->setRenderHint(QPainter::Antialiasing);
    m_chart->setMinimumHeight(220);

    auto *split = new QSplitter(Qt::Vertical);
    split->addWidget(m_table);
    split->addWidget(m_chart);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);
}

void TalkersPage::showTalkers(const QJsonArray &talkers, double seconds, bool shown)
{
    m_seconds = seconds;
    m_model.updateTalkers(talkers, seconds, shown);
    m_chartPending = !shown;
    if (shown)
        refreshChart(seconds);
}

void TalkersPage::showPending()
{
    m_model.showPendingRows();
    if (std::exchange(m_chartPending, false))
        refreshChart(m_seconds);
}

QString TalkersPage::chartTitle(bool brokerRates)
{
    return brokerRates ? tr("Busiest identities: messages per second (published + delivered), "
                            "the broker's rates over its last 10 s")
                       : tr("Busiest identities: messages per second (published + delivered), "
                            "averaged over the last minute");
}

void TalkersPage::refreshChart(double now)
{
    const QString title = chartTitle(m_model.brokerRates());
    if (m_chart->chart()->title() != title) // a new title lays the chart out again
        m_chart->chart()->setTitle(title);
    const QStringList top = m_model.topTalkers(ChartedTalkers);
    double highest = 0;
    double oldest = now;
    for (int i = 0; i < m_lines.size(); ++i) {
        QLineSeries *line = m_lines[i];
        if (i >= top.size()) {
            line->setVisible(false);
            line->clear();
            continue;
        }
        QList<QPointF> points;
        for (const TalkerRatePoint &p : m_model.history(top[i])) {
            points.append({p.seconds - now, p.publish + p.deliver});
            highest = std::max(highest, p.publish + p.deliver);
            oldest = std::min(oldest, p.seconds);
        }
        line->setName(top[i]);
        line->replace(points); // one redraw, not one per point
        line->setVisible(true);
    }
    m_x->setRange(-std::max(60.0, now - oldest), 0);
    m_y->setRange(0, std::max(10.0, highest * 1.2));
}

QStringList TalkersPage::chartedNames() const
{
    QStringList names;
    for (const QLineSeries *line : m_lines) {
        if (line->isVisible())
            names.append(line->name());
    }
    return names;
}

} // namespace cmq::admingui
