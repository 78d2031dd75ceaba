#pragma once
// The messages waiting in one queue, as metadata only (the `queue_messages` command,
// docs/ADMIN-PROTOCOL.md): one page at a time, paged by the broker (keyset on the entry id), so
// a queue of a million messages costs the console one page. The model keeps the paging state:
// which request gives the first, next or previous page under the current filter.

#include "models/jsontablemodel.h"

namespace cmq::admingui {

class QueueMessageModel final : public JsonTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(QueueMessageModel)

public:
    enum Column {
        EntryId,
        MessageId,
        Sender,
        RoutingKey,
        Size,
        Age,
        Redelivered,
        Deliveries,
        ColumnCount
    };
    static constexpr int PageRows = 100;

    explicit QueueMessageModel(QObject *parent = nullptr);

    void setQueue(const QString &queue);
    QString queue() const { return m_queue; }
    // One word (no blanks): sender CN or routing key contains it. Starts again at page 1.
    void setFilter(const QString &filter);
    QString filter() const { return m_filter; }
    void setPageRows(int rows) { m_pageRows = rows; }

    // The request lines for the page to show; the reply goes to applyPage().
    QString firstPageRequest();
    QString nextPageRequest();     // empty when on the last page
    QString previousPageRequest(); // empty when on the first page
    QString reloadRequest() const; // the current page again
    // The reply to the last request; false (nothing changes) for one about another queue or
    // filter, or for an older request.
    bool applyPage(const QJsonObject &page);

    int pageNumber() const { return int(m_pageStarts.size()); } // 1-based; 0 before any
    bool hasNextPage() const { return m_more; }
    bool hasPreviousPage() const { return m_pageStarts.size() > 1; }

protected:
    QString keyOf(const QJsonObject &row) const override;
    QStringList headers() const override;
    QVariant cell(const QJsonObject &row, int column) const override;

private:
    QString requestFor(qint64 afterId) const;

    QString m_queue;
    QString m_filter;
    int m_pageRows = PageRows;
    QList<qint64> m_pageStarts;   // the after_id of each page up to the current one
    qint64 m_requestedAfter = -1; // the page asked for last (-1: none)
    qint64 m_nextAfter = 0;
    bool m_more = false;
};

} // namespace cmq::admingui
