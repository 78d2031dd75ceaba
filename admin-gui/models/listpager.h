#pragma once
// Which page of a large queue, connection, rate-limit bucket or talker list the console asks
// the broker for (issue 17 item 9, docs/ADMIN-PROTOCOL.md "Paging"). A list up to
// PagingThreshold rows comes whole, as before; above it the pager asks for PageRows rows at a
// time, and the tab's filter box and header sort go to the broker instead of sorting 50,000
// rows here. Columns the broker cannot sort by (rates and trends the console derives) sort the
// page only.

#include <QJsonObject>
#include <QObject>
#include <QStringList>

#include "admin/adminrequest.h"

namespace cmq::admingui {

class ListPager final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ListPager)

public:
    // Three lists just under it, sent whole, cost 15 to 30 ms of GUI-thread time a snapshot
    // (docs/ADMIN-GUI.md, "Responsiveness"); at 2,000 they cost 28 to 36 ms, over the 30 aimed at.
    static constexpr int PagingThreshold = 1000;
    static constexpr int PageRows = 200;

    // `list`: "queues", "connections", "ratelimits" or "talkers"; `columnKeys`: per model column
    // the broker's sort key, empty for a column it cannot sort by; `rowsField`: where the rows are
    // when the list's section is an object ("buckets" of "ratelimits"), empty for an array.
    ListPager(QString list, QStringList columnKeys, QObject *parent = nullptr,
              QString rowsField = {});
    // The Queues, Connections, Rate limits and Talkers tabs' pagers, their columns mapped to
    // the broker's keys.
    static ListPager *forQueues(QObject *parent = nullptr);
    static ListPager *forConnections(QObject *parent = nullptr);
    static ListPager *forRateLimits(QObject *parent = nullptr);
    static ListPager *forTalkers(QObject *parent = nullptr);

    // From this many rows on, the list is paged; it goes back to whole below half of it.
    void setThreshold(int rows) { m_threshold = rows; }
    bool isPaged() const { return m_page.paged; }
    // What to ask for; `paged` is false while the list comes whole.
    const admin::ListPage &request() const { return m_page; }

    // The list's size from a snapshot (its array, or its "<list>_page" while paged): turns
    // paging on or off, and moves back from past the end when the list shrank.
    void followSnapshot(const QJsonObject &snapshot);
    // The filter box. The broker filters on one word: the text up to the first blank (the
    // table's own filter still applies the whole text to the page).
    void setFilter(const QString &text);
    // A header click; a column without a broker key keeps the broker's order.
    void setSort(int column, Qt::SortOrder order);
    bool sortsOnBroker(int column) const { return !m_columnKeys.value(column).isEmpty(); }
    void nextPage();
    void previousPage();
    bool hasNext() const { return m_page.offset + m_page.limit < m_matched; }
    bool hasPrevious() const { return m_page.offset > 0; }
    qint64 matched() const { return m_matched; }
    qint64 total() const { return m_total; }
    // "Rows 201–400 of 1,234 matching (50,000 queues)"; empty while not paged.
    QString summary() const;

Q_SIGNALS:
    // request() changed: the watch must ask for another page.
    void requestChanged();
    // A snapshot of the list arrived (summary() and the buttons may have changed).
    void pageShown();

private:
    void setOffset(int offset);

    QString m_list;
    QStringList m_columnKeys;
    QString m_rowsField;
    admin::ListPage m_page;
    QString m_sort; // kept while not paged, so paging starts in the view's order
    bool m_descending = false;
    QString m_filter;
    qint64 m_matched = 0;
    qint64 m_total = 0;
    int m_shownRows = 0;
    int m_shownOffset = 0; // the page the last snapshot holds (a new one may be asked for)
    int m_threshold = PagingThreshold;
};

} // namespace cmq::admingui
