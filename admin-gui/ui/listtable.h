#pragma once
// The read-only list tables of the queue detail window (bindings, consumers, messages, dead
// letters): whole-row selection, alternating rows, columns sized to their contents.

#include <QAbstractItemModel>
#include <QHeaderView>
#include <QTableView>

namespace cmq::admingui {

inline QTableView *makeListTable(QAbstractItemModel *model)
{
    auto *view = new QTableView;
    view->setModel(model);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setAlternatingRowColors(true);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setStretchLastSection(true);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    return view;
}

} // namespace cmq::admingui
