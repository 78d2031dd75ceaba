#pragma once
// A filterable, sortable table over one JsonTableModel, with a row of action buttons: the
// shape of the Queues, Connections and Rate limits tabs.

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QWidget>

namespace cmq::admingui {

class JsonTableModel;
class ListPager;

class TablePage final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TablePage)

public:
    explicit TablePage(JsonTableModel *model, const QString &filterHint, QWidget *parent = nullptr);

    QPushButton *addButton(const QString &text, bool needsSelection = true);
    // A button that changes the broker (purge, delete, disconnect): needs a selection, and is
    // greyed with `reason` as its tooltip while actions are not allowed.
    QPushButton *addActionButton(const QString &text);
    // Not allowed: the buttons are greyed, and a note beside them says why (its tooltip and
    // theirs carry the whole `reason`).
    void setActionsAllowed(bool allowed, const QString &reason = {});
    QString actionsNote() const
    {
        return m_actionsNote->isVisibleTo(this) ? m_actionsNote->text() : QString();
    }
    QTableView *view() { return m_view; }
    QLineEdit *filter() { return m_filter; }
    QSortFilterProxyModel *proxy() { return &m_proxy; }
    // The source row of the current selection, -1 when none.
    int selectedSourceRow() const;
    // Every selected source row, ascending (the bulk actions).
    QList<int> selectedSourceRows() const;
    // Selects exactly the rows with these keys; returns how many were found.
    int selectKeys(const QStringList &keys);
    // Selects the row with this key (for tests and for keeping the selection).
    bool selectKey(const QString &key);
    // Column widths and sort order, for QSettings; restoring an empty or foreign state is a
    // no-op, a restored one keeps its widths (the first data no longer resizes the columns).
    QByteArray saveHeaderState() const;
    bool restoreHeaderState(const QByteArray &state);
    // Server-side paging of a large list: the filter box and header clicks go to `pager` too,
    // and a bar under the table ("Rows 201–400 of 50,000 queues", previous, next) shows while
    // the list is paged.
    void attachPager(ListPager *pager);
    QLabel *pageSummary() { return m_pageSummary; }
    QPushButton *previousPageButton() { return m_previousPage; }
    QPushButton *nextPageButton() { return m_nextPage; }
    // The header's context menu (right-click): one checkable entry per column, with the
    // column's tooltip, and "Show all columns". Which columns are hidden is part of the saved
    // header state. The caller owns the menu.
    QMenu *columnsMenu(QWidget *parent = nullptr);
    void setColumnShown(int column, bool shown);
    // Columns hidden until the operator shows them (a restored header state overrides this).
    void hideColumnsByDefault(const QList<int> &columns);

private:
    void updateButtons();
    void updatePagerBar();

    JsonTableModel *m_model;
    QSortFilterProxyModel m_proxy;
    QLineEdit *m_filter;
    QTableView *m_view;
    QHBoxLayout *m_buttons;
    QLabel *m_actionsNote;
    QList<QPushButton *> m_selectionButtons;
    QList<QPushButton *> m_actionButtons;
    QString m_actionsRefusal; // empty while actions are allowed
    bool m_sized = false;
    ListPager *m_pager = nullptr;
    QWidget *m_pagerBar = nullptr;
    QLabel *m_pageSummary = nullptr;
    QPushButton *m_previousPage = nullptr;
    QPushButton *m_nextPage = nullptr;
};

} // namespace cmq::admingui
