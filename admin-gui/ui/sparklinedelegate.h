#pragma once
// Paints a queue's recent depth (ready + unacked, the last N snapshots from QueueDepthHistory)
// as a small line in its cell, with the current depth beside it: a backlog building up or
// draining reads at a glance, for every queue in the table at once.

#include <QStyledItemDelegate>

namespace cmq::admingui {

class QueueDepthHistory;

class SparklineDelegate final : public QStyledItemDelegate
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SparklineDelegate)

public:
    // How many of the newest samples a cell draws.
    static constexpr int Samples = 60;

    explicit SparklineDelegate(const QueueDepthHistory &history, QObject *parent = nullptr);
    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override;
    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;

private:
    const QueueDepthHistory &m_history;
};

} // namespace cmq::admingui
