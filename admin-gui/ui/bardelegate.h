#pragma once
// Paints a cell's FractionRole (0..1) as a horizontal bar behind its text: tokens left in a
// rate-limit bucket read at a glance, red when nearly empty.

#include <QStyledItemDelegate>

namespace cmq::admingui {

class BarDelegate final : public QStyledItemDelegate
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(BarDelegate)

public:
    explicit BarDelegate(QObject *parent = nullptr);
    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override;
};

} // namespace cmq::admingui
