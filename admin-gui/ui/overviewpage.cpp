#include "ui/overviewpage.h"

#include "models/palettecolors.h"
#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QGroupBox>
#include <QLineSeries>
#include <QVBoxLayout>
#include <QValueAxis>

namespace cmq::admingui {

namespace {

struct Figure
{
    const char *name;
    const char *label;
};

// Name → caption; the name is also how tests find a figure.
constexpr Figure Figures[] = {
    {"connections", "Connections"},
    {"queues", "Queues"},
    {"ready", "Ready"},
    {"unacked", "Unacked"},
    {"publish", "Publish /s"},
    {"deliver", "Deliver /s"},
    {"ack", "Ack /s"},
    {"consumers", "Consumers"},
};

QString number(double value)
{
    return value == qint64(value) ? QLocale().toString(qint64(value))
                                  : QLocale().toString(value, 'f', 1);
}

} // namespace

OverviewPage::OverviewPage(QWidget *parent) : QWidget(parent)
{
    auto *figures = new QGroupBox(tr("Key figures"));
    auto *grid = new QGridLayout(figures);
    int column = 0;
    for (const Figure &f : Figures) {
        auto *caption = new QLabel(tr(f.label));
        caption->setAlignment(Qt::AlignCenter);
        auto *value = new QLabel(QStringLiteral("–"));
        value->setAlignment(Qt::AlignCenter);
        QFont font = value->font();
        font.setPointSizeF(font.pointSizeF() * 1.8);
        font.setBold(true);
        value->setFont(font);
        grid->addWidget(value, 0, column);
        grid->addWidget(caption, 1, column);
        m_figures.insert(QLatin1String(f.name), value);
        ++column;
    }

    m_published = new QLineSeries;
    m_published->setName(tr("published/s"));
    m_delivered = new QLineSeries;
    m_delivered->setName(tr("delivered/s"));
    m_acknowledged = new QLineSeries;
    m_acknowledged->setName(tr("acknowledged/s"));
    m_depth = new QLineSeries;
    m_depth->setName(tr("ready + unacked"));

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(figures);
    layout->addWidget(makeChart(tr("Message rates (per second)"),
                                {m_published, m_delivered, m_acknowledged}, &m_rateX, &m_rateY),
                      1);
    layout->addWidget(
        makeChart(tr("Total queue depth (messages)"), {m_depth}, &m_depthX, &m_depthY), 1);
}

QChartView *OverviewPage::makeChart(const QString &title, const QList<QLineSeries *> &series,
                                    QValueAxis **x, QValueAxis **y)
{
    auto *chart = new QChart;
    chart->setTheme(isDarkPalette() ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setTitle(title);
    chart->legend()->setAlignment(Qt::AlignRight);
    *x = new QValueAxis;
    (*x)->setTitleText(tr("seconds ago"));
    (*x)->setLabelFormat("%d");
    (*x)->setRange(-60, 0); // until the first snapshot: an empty minute, not a degenerate axis
    *y = new QValueAxis;
    (*y)->setLabelFormat("%.0f");
    (*y)->setRange(0, 10);
    chart->addAxis(*x, Qt::AlignBottom);
    chart->addAxis(*y, Qt::AlignLeft);
    for (QLineSeries *s : series) {
        chart->addSeries(s);
        s->attachAxis(*x);
        s->attachAxis(*y);
    }
    auto *view = new QChartView(chart);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(180);
    return view;
}

void OverviewPage::showSnapshot(const QJsonObject &snapshot)
{
    const QJsonObject totals = snapshot.value("totals").toObject();
    const QJsonObject rates = snapshot.value("rates").toObject();
    m_figures["connections"]->setText(number(totals.value("connections").toDouble()));
    m_figures["queues"]->setText(number(totals.value("queues").toDouble()));
    m_figures["ready"]->setText(number(totals.value("messages_ready").toDouble()));
    m_figures["unacked"]->setText(number(totals.value("messages_unacked").toDouble()));
    m_figures["consumers"]->setText(number(totals.value("consumers").toDouble()));
    m_figures["publish"]->setText(number(rates.value("messages_published").toDouble()));
    m_figures["deliver"]->setText(number(rates.value("messages_delivered").toDouble()));
    m_figures["ack"]->setText(number(rates.value("messages_acknowledged").toDouble()));
    m_history.addSnapshot(snapshot);
    refreshCharts();
}

QString OverviewPage::figure(const QString &name) const
{
    const QLabel *label = m_figures.value(name);
    return label ? label->text() : QString();
}

void OverviewPage::refreshCharts()
{
    const QList<RateSample> &samples = m_history.samples();
    if (samples.isEmpty())
        return;
    const double now = samples.last().seconds;
    QList<QPointF> published, delivered, acknowledged, depth;
    for (const RateSample &s : samples) {
        const double x = s.seconds - now; // negative: seconds ago
        published.append({x, s.published});
        delivered.append({x, s.delivered});
        acknowledged.append({x, s.acknowledged});
        depth.append({x, s.depth});
    }
    // replace() redraws once; appending point by point would redraw per point.
    m_published->replace(published);
    m_delivered->replace(delivered);
    m_acknowledged->replace(acknowledged);
    m_depth->replace(depth);
    const double span = std::max(60.0, now - samples.first().seconds);
    for (QValueAxis *x : {m_rateX, m_depthX})
        x->setRange(-span, 0);
    m_rateY->setRange(0, std::max(10.0, m_history.maxRate() * 1.2));
    m_depthY->setRange(0, std::max(10.0, m_history.maxDepth() * 1.2));
}

} // namespace cmq::admingui
