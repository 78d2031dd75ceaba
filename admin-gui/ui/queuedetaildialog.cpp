#include "ui/queuedetaildialog.h"

#include "models/palettecolors.h"
#include <QChart>
#include <QChartView>
#include <QDialogButtonBox>
#include <QGridLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLineSeries>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>

#include "ui/listtable.h"

namespace cmq::admingui {

namespace {

struct Figure
{
    const char *name; // the queue object's field, also how tests find the figure
    const char *label;
};

constexpr Figure Figures[] = {
    {"owner", "Owner"},
    {"ready", "Ready"},
    {"unacked", "Unacked"},
    {"inflight", "In flight"},
    {"consumers", "Consumers"},
    {"bytes", "Bytes"},
    {"max_length", "Limit"},
    {"overflow", "Overflow"},
    {"published", "Published"},
    {"delivered", "Delivered"},
    {"acknowledged", "Acknowledged"},
    {"redelivered", "Redelivered"},
    {"evicted", "Evicted"},
    {"publish_rate", "Publish /s"},
    {"deliver_rate", "Deliver /s"},
    {"message_ttl_ms", "TTL (ms)"},
    {"dead_letter_exchange", "Dead-letter exchange"},
    {"dead_letter_routing_key", "Dead-letter key"},
    {"delivery_limit", "Delivery limit"},
    {"dead_lettered", "Dead-lettered"},
};
constexpr int FigureColumns = 5;

QString text(const QJsonValue &value)
{
    if (value.isString())
        return value.toString().isEmpty() ? QStringLiteral("–") : value.toString();
    if (!value.isDouble())
        return QStringLiteral("–");
    const double d = value.toDouble();
    return d == qint64(d) ? QLocale().toString(qint64(d)) : QLocale().toString(d, 'f', 1);
}

QWidget *titled(const QString &title, QWidget *content)
{
    auto *box = new QGroupBox(title);
    auto *layout = new QVBoxLayout(box);
    layout->addWidget(content);
    return box;
}

} // namespace

QueueDetailDialog::QueueDetailDialog(const QString &queue, QWidget *parent)
    : QDialog(parent), m_queue(queue), m_state(new QLabel),
      m_messages(new QueueMessagesPanel(queue)), m_deadLetters(new DeadLetterPanel(queue))
{
    setWindowTitle(tr("Queue %1").arg(queue));
    auto *heading = new QLabel(queue);
    QFont font = heading->font();
    font.setPointSizeF(font.pointSizeF() * 1.4);
    font.setBold(true);
    heading->setFont(font);
    heading->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_state->setStyleSheet(QStringLiteral("color:%1").arg(errorText().name()));

    auto *tables = new QSplitter(Qt::Horizontal);
    QTableView *bindings = makeListTable(&m_bindings);
    bindings->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    tables->addWidget(titled(tr("Bindings (exchange → routing key)"), bindings));
    QTableView *consumers = makeListTable(&m_consumers);
    consumers->setToolTip(tr("Click a consumer to show its connection on the Connections tab"));
    connect(consumers, &QTableView::clicked, this,
            [this](const QModelIndex &index) { requestConsumerConnection(index.row()); });
    tables->addWidget(titled(tr("Consumers"), consumers));
    tables->setStretchFactor(0, 2);
    tables->setStretchFactor(1, 3);
    tables->setSizes({420, 700});

    m_tabs = new QTabWidget;
    m_tabs->addTab(tables, tr("Bindings and consumers"));
    m_tabs->addTab(m_messages, tr("Messages (metadata)"));
    m_tabs->addTab(m_deadLetters, tr("Dead letters"));

    auto *split = new QSplitter(Qt::Vertical);
    split->addWidget(makeChart());
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);

    auto *top = new QHBoxLayout;
    top->addWidget(heading);
    top->addStretch(1);
    top->addWidget(m_state);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(makeFigures());
    layout->addWidget(split, 1);
    layout->addWidget(buttons);
    resize(1180, 720);
}

void QueueDetailDialog::requestConsumerConnection(int row)
{
    const QJsonObject consumer = m_consumers.rowObject(row);
    if (!consumer.isEmpty())
        Q_EMIT connectionRequested(quint64(consumer.value(u"id").toInteger()));
}

QWidget *QueueDetailDialog::makeFigures()
{
    auto *box = new QGroupBox(tr("Figures"));
    auto *grid = new QGridLayout(box);
    int index = 0;
    for (const Figure &f : Figures) {
        auto *caption = new QLabel(tr(f.label) + u':');
        auto *value = new QLabel(QStringLiteral("–"));
        QFont bold = value->font();
        bold.setBold(true);
        value->setFont(bold);
        const int row = index / FigureColumns;
        const int column = index % FigureColumns * 2;
        grid->addWidget(caption, row, column, Qt::AlignRight);
        grid->addWidget(value, row, column + 1, Qt::AlignLeft);
        m_figures.insert(QLatin1String(f.name), value);
        ++index;
    }
    for (int column = 1; column < FigureColumns * 2; column += 2)
        grid->setColumnStretch(column, 1);
    return box;
}

QWidget *QueueDetailDialog::makeChart()
{
    m_ready = new QLineSeries;
    m_ready->setName(tr("ready"));
    m_unacked = new QLineSeries;
    m_unacked->setName(tr("unacked"));
    auto *chart = new QChart;
    chart->setTheme(isDarkPalette() ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setTitle(tr("Depth (messages)"));
    chart->legend()->setAlignment(Qt::AlignRight);
    m_x = new QValueAxis;
    m_x->setTitleText(tr("seconds ago"));
    m_x->setLabelFormat("%d");
    m_x->setRange(-60, 0);
    m_y = new QValueAxis;
    m_y->setLabelFormat("%.0f");
    m_y->setRange(0, 10);
    chart->addAxis(m_x, Qt::AlignBottom);
    chart->addAxis(m_y, Qt::AlignLeft);
    for (QLineSeries *series : {m_ready, m_unacked}) {
        chart->addSeries(series);
        series->attachAxis(m_x);
        series->attachAxis(m_y);
    }
    auto *view = new QChartView(chart);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumHeight(220);
    return view;
}

void QueueDetailDialog::showQueue(const QJsonObject &queue, const QJsonArray &bindings,
                                  const QJsonArray &connections, const QList<DepthSample> &history)
{
    if (queue.isEmpty()) {
        // Keep the last figures: they say what the queue held when it went away.
        m_state->setText(tr("This queue no longer exists."));
        return;
    }
    m_state->clear();
    for (auto it = m_figures.cbegin(); it != m_figures.cend(); ++it)
        it.value()->setText(text(queue.value(it.key())));
    m_bindings.updateBindings(bindings, m_queue);
    m_consumers.updateConsumers(connections, m_queue);
    m_deadLetters->followQueue(queue);
    showHistory(history);
}

void QueueDetailDialog::showHistory(const QList<DepthSample> &history)
{
    if (history.isEmpty())
        return;
    const double now = history.last().seconds;
    QList<QPointF> ready, unacked;
    ready.reserve(history.size());
    unacked.reserve(history.size());
    double max = 0;
    for (const DepthSample &s : history) {
        ready.append({s.seconds - now, double(s.ready)});
        unacked.append({s.seconds - now, double(s.unacked)});
        max = std::max({max, double(s.ready), double(s.unacked)});
    }
    m_ready->replace(ready);
    m_unacked->replace(unacked);
    m_x->setRange(-std::max(60.0, now - history.first().seconds), 0);
    m_y->setRange(0, std::max(10.0, max * 1.2));
}

void QueueDetailDialog::showMessagesTab()
{
    m_tabs->setCurrentWidget(m_messages);
}

void QueueDetailDialog::showDeadLettersTab()
{
    m_tabs->setCurrentWidget(m_deadLetters);
}

QString QueueDetailDialog::figure(const QString &name) const
{
    const QLabel *label = m_figures.value(name);
    return label ? label->text() : QString();
}

int QueueDetailDialog::depthPointCount() const
{
    return int(m_ready->count());
}

} // namespace cmq::admingui
