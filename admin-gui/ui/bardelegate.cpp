#include "ui/bardelegate.h"

#include <QPainter>

#include "models/jsontablemodel.h"

namespace cmq::admingui {

BarDelegate::BarDelegate(QObject *parent) : QStyledItemDelegate(parent)
{
}

void BarDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option,
                        const QModelIndex &index) const
{
    const QVariant fraction = index.data(JsonTableModel::FractionRole);
    if (!fraction.isValid()) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    const double f = std::clamp(fraction.toDouble(), 0.0, 1.0);
    painter->save();
    const QRect frame = option.rect.adjusted(3, 4, -3, -4);
    painter->setPen(option.palette.color(QPalette::Mid)); // the track follows the palette
    painter->setBrush(option.palette.color(QPalette::Base));
    painter->drawRect(frame);
    QRect bar = frame.adjusted(1, 1, 0, 0);
    bar.setWidth(int(bar.width() * f));
    const QColor color = f < 0.2   ? QColor(0xe0, 0x5a, 0x4f)
                         : f < 0.5 ? QColor(0xf0, 0xb4, 0x3c)
                                   : QColor(0x5c, 0xb8, 0x5c);
    painter->fillRect(bar, color);
    painter->setPen(option.palette.color(QPalette::Text));
    painter->drawText(frame, Qt::AlignCenter, index.data(Qt::DisplayRole).toString());
    painter->restore();
}

} // namespace cmq::admingui
