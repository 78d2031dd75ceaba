#include "ui/sparklinedelegate.h"

#include <algorithm>

#include <QApplication>
#include <QPainter>
#include <QPainterPath>

#include "models/jsontablemodel.h"
#include "models/queuedepthhistory.h"

namespace cmq::admingui {

SparklineDelegate::SparklineDelegate(const QueueDepthHistory &history, QObject *parent)
    : QStyledItemDelegate(parent), m_history(history)
{
}

QSize SparklineDelegate::sizeHint(const QStyleOptionViewItem &option,
                                  const QModelIndex &index) const
{
    QSize size = QStyledItemDelegate::sizeHint(option, index);
    size.setWidth(std::max(size.width() + 4 * option.fontMetrics.averageCharWidth(), 100));
    return size;
}

void SparklineDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option,
                              const QModelIndex &index) const
{
    // Background and selection as the style draws them, without the text.
    QStyleOptionViewItem background = option;
    initStyleOption(&background, index);
    const QString depth = background.text;
    background.text.clear();
    const QWidget *widget = option.widget;
    QStyle *style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &background, painter, widget);

    const QList<DepthSample> samples =
        m_history.recent(index.data(JsonTableModel::KeyRole).toString(), Samples);
    const bool selected = option.state & QStyle::State_Selected;
    const QColor text = option.palette.color(selected ? QPalette::HighlightedText : QPalette::Text);
    const int textWidth = option.fontMetrics.horizontalAdvance(depth) + 6;
    const QRect line = option.rect.adjusted(3, 3, -textWidth - 3, -3);
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    if (samples.size() >= 2 && line.width() > 8) {
        qint64 max = 1;
        for (const DepthSample &s : samples)
            max = std::max(max, s.ready + s.unacked);
        // A fixed horizontal step, so a queue seen for a few seconds draws a short line at the
        // right, where the newest sample is, rather than stretching it over the cell.
        const double step = double(line.width()) / (Samples - 1);
        const double x0 = line.right() - step * double(samples.size() - 1);
        QPainterPath path;
        for (qsizetype i = 0; i < samples.size(); ++i) {
            const double depthNow = double(samples[i].ready + samples[i].unacked);
            // Through pixel centres, so a flat line is one crisp row, not two half-drawn ones.
            const QPointF point(x0 + step * double(i),
                                line.bottom() + 0.5 - depthNow / double(max) * (line.height() - 1));
            i == 0 ? path.moveTo(point) : path.lineTo(point);
        }
        painter->setPen(QPen(selected ? text : option.palette.color(QPalette::Highlight), 1.5));
        painter->drawPath(path);
    }
    painter->setPen(text);
    painter->drawText(option.rect.adjusted(0, 0, -3, 0), Qt::AlignRight | Qt::AlignVCenter, depth);
    painter->restore();
}

} // namespace cmq::admingui
