#include "ui/tablepage.h"

#include <algorithm>

#include <QHeaderView>
#include <QVBoxLayout>

#include "models/jsontablemodel.h"
#include "models/listpager.h"

namespace cmq::admingui {

TablePage::TablePage(JsonTableModel *model, const QString &filterHint, QWidget *parent)
    : QWidget(parent), m_model(model), m_filter(new QLineEdit), m_view(new QTableView),
      m_buttons(new QHBoxLayout), m_actionsNote(new QLabel)
{
    m_actionsNote->setVisible(false);
    m_buttons->addWidget(m_actionsNote);
    m_proxy.setSourceModel(model);
    m_proxy.setSortRole(JsonTableModel::SortRole);
    m_proxy.setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_proxy.setFilterKeyColumn(-1);
    m_filter->setPlaceholderText(filterHint);
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, &m_proxy,
            &QSortFilterProxyModel::setFilterFixedString);

    m_view->setModel(&m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(0, Qt::AscendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Several rows for the bulk actions (Ctrl/Shift-click, Ctrl+A).
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setAlternatingRowColors(true);
    m_view->setWordWrap(false); // one line per row; long values are elided
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setDefaultSectionSize(100);
    // Sizing columns to contents looks at this many rows, not all 5,000 of a large broker.
    m_view->horizontalHeader()->setResizeContentsPrecision(200);
    // Long values (certificate serials) are elided, with the whole text as the tooltip.
    m_view->horizontalHeader()->setMaximumSectionSize(220);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &TablePage::updateButtons);
    // Right-click on the header chooses the columns: a wide table fits a small screen by
    // hiding what this operator does not look at, instead of scrolling sideways.
    QHeaderView *header = m_view->horizontalHeader();
    header->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(header, &QHeaderView::customContextMenuRequested, this,
            [this, header](const QPoint &at) {
                QMenu *menu = columnsMenu(this);
                menu->setAttribute(Qt::WA_DeleteOnClose);
                menu->popup(header->mapToGlobal(at));
            });
    // Column widths follow the first data, then stay put: live updates must not make them jump.
    connect(
        model, &QAbstractItemModel::rowsInserted, this,
        [this] {
            if (m_sized)
                return;
            m_sized = true;
            m_view->resizeColumnsToContents();
        },
        Qt::QueuedConnection);

    auto *top = new QHBoxLayout;
    top->addWidget(m_filter, 1);
    top->addLayout(m_buttons);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_view, 1);
}

QPushButton *TablePage::addButton(const QString &text, bool needsSelection)
{
    auto *button = new QPushButton(text);
    m_buttons->addWidget(button);
    if (needsSelection) {
        m_selectionButtons.append(button);
        button->setEnabled(false);
    }
    return button;
}

QPushButton *TablePage::addActionButton(const QString &text)
{
    QPushButton *button = addButton(text);
    m_actionButtons.append(button);
    return button;
}

void TablePage::setActionsAllowed(bool allowed, const QString &reason)
{
    m_actionsRefusal = allowed ? QString() : reason;
    m_actionsNote->setText(tr("Read-only: actions are refused"));
    m_actionsNote->setToolTip(m_actionsRefusal);
    m_actionsNote->setVisible(!allowed && !m_actionButtons.isEmpty());
    for (QPushButton *button : std::as_const(m_actionButtons))
        button->setToolTip(m_actionsRefusal);
    updateButtons();
}

int TablePage::selectedSourceRow() const
{
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return -1;
    return m_proxy.mapToSource(rows.first()).row();
}

QList<int> TablePage::selectedSourceRows() const
{
    QList<int> rows;
    for (const QModelIndex &index : m_view->selectionModel()->selectedRows())
        rows << m_proxy.mapToSource(index).row();
    std::sort(rows.begin(), rows.end());
    return rows;
}

int TablePage::selectKeys(const QStringList &keys)
{
    m_view->clearSelection();
    int selected = 0;
    for (const QString &key : keys) {
        const int row = m_model->rowOf(key);
        const QModelIndex index =
            row < 0 ? QModelIndex() : m_proxy.mapFromSource(m_model->index(row, 0));
        if (!index.isValid())
            continue;
        m_view->selectionModel()->select(index,
                                         QItemSelectionModel::Select | QItemSelectionModel::Rows);
        ++selected;
    }
    return selected;
}

bool TablePage::selectKey(const QString &key)
{
    const int row = m_model->rowOf(key);
    if (row < 0)
        return false;
    const QModelIndex index = m_proxy.mapFromSource(m_model->index(row, 0));
    if (!index.isValid())
        return false;
    m_view->selectRow(index.row());
    return true;
}

QByteArray TablePage::saveHeaderState() const
{
    return m_view->horizontalHeader()->saveState();
}

bool TablePage::restoreHeaderState(const QByteArray &state)
{
    QHeaderView *header = m_view->horizontalHeader();
    if (state.isEmpty() || !header->restoreState(state))
        return false;
    m_sized = true;
    m_view->sortByColumn(header->sortIndicatorSection(), header->sortIndicatorOrder());
    return true;
}

void TablePage::attachPager(ListPager *pager)
{
    m_pager = pager;
    m_pagerBar = new QWidget;
    m_previousPage = new QPushButton(tr("◀ Previous"));
    m_nextPage = new QPushButton(tr("Next ▶"));
    m_pageSummary = new QLabel;
    auto *bar = new QHBoxLayout(m_pagerBar);
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(m_pageSummary, 1);
    bar->addWidget(m_previousPage);
    bar->addWidget(m_nextPage);
    m_pagerBar->setVisible(false);
    layout()->addWidget(m_pagerBar);
    connect(m_previousPage, &QPushButton::clicked, pager, &ListPager::previousPage);
    connect(m_nextPage, &QPushButton::clicked, pager, &ListPager::nextPage);
    connect(m_filter, &QLineEdit::textChanged, pager, &ListPager::setFilter);
    QHeaderView *header = m_view->horizontalHeader();
    connect(header, &QHeaderView::sortIndicatorChanged, pager, &ListPager::setSort);
    pager->setSort(header->sortIndicatorSection(), header->sortIndicatorOrder());
    connect(pager, &ListPager::pageShown, this, &TablePage::updatePagerBar);
    connect(pager, &ListPager::requestChanged, this, &TablePage::updatePagerBar);
}

void TablePage::updatePagerBar()
{
    m_pagerBar->setVisible(m_pager->isPaged());
    m_pageSummary->setText(m_pager->summary());
    m_previousPage->setEnabled(m_pager->hasPrevious());
    m_nextPage->setEnabled(m_pager->hasNext());
}

QMenu *TablePage::columnsMenu(QWidget *parent)
{
    auto *menu = new QMenu(tr("Columns"), parent);
    menu->setToolTipsVisible(true);
    const QHeaderView *header = m_view->horizontalHeader();
    const int visible = header->count() - header->hiddenSectionCount();
    for (int column = 0; column < m_model->columnCount(); ++column) {
        QAction *action = menu->addAction(
            m_model->headerData(column, Qt::Horizontal, Qt::DisplayRole)
                .toString()
                .replace(u'\n', u' '));
        action->setToolTip(m_model->headerData(column, Qt::Horizontal, Qt::ToolTipRole).toString());
        action->setCheckable(true);
        action->setChecked(!header->isSectionHidden(column));
        // Not the last one shown: without a visible column there is no header to bring the
        // others back from.
        action->setEnabled(header->isSectionHidden(column) || visible > 1);
        connect(action, &QAction::toggled, this,
                [this, column](bool shown) { setColumnShown(column, shown); });
    }
    menu->addSeparator();
    connect(menu->addAction(tr("Show all columns")), &QAction::triggered, this, [this] {
        for (int column = 0; column < m_model->columnCount(); ++column)
            setColumnShown(column, true);
    });
    return menu;
}

void TablePage::setColumnShown(int column, bool shown)
{
    QHeaderView *header = m_view->horizontalHeader();
    if (header->isSectionHidden(column) != shown)
        return;
    header->setSectionHidden(column, !shown);
    // A column hidden before the first data was never sized to its contents.
    if (shown && m_sized)
        m_view->resizeColumnToContents(column);
}

void TablePage::hideColumnsByDefault(const QList<int> &columns)
{
    for (int column : columns)
        m_view->horizontalHeader()->setSectionHidden(column, true);
}

void TablePage::updateButtons()
{
    const bool selected = m_view->selectionModel()->hasSelection();
    for (QPushButton *button : std::as_const(m_selectionButtons))
        button->setEnabled(selected &&
                           (m_actionsRefusal.isEmpty() || !m_actionButtons.contains(button)));
}

} // namespace cmq::admingui
