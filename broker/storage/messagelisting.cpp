#include "messagelisting.h"

#include <utility>

#include <QSqlQuery>

#include "backlogstore.h"

namespace cmq::storage {

namespace {

// `text` as a LIKE pattern that matches it anywhere, its own % _ and \ taken literally.
QString containsPattern(const QString &text)
{
    QString escaped;
    for (const QChar c : text.toLower()) {
        if (c == u'%' || c == u'_' || c == u'\\')
            escaped += u'\\';
        escaped += c;
    }
    return u'%' + escaped + u'%';
}

struct ScanWindow
{
    qint64 lastId = 0;
    qint64 entries = 0;
};

// The next `MaxFilterScanEntries` entries after `afterId` (their last id and how many): what a
// filtered page looks at. Read from the (queue, id) index alone.
Result<ScanWindow> scanWindow(SqlSession &session, const MessageListingQuery &q)
{
    using R = Result<ScanWindow>;
    QSqlQuery query = session.newQuery();
    Status st = session.run(
        query, QStringLiteral("SELECT COALESCE(MAX(id), 0), COUNT(*) FROM (SELECT id FROM "
                              "queue_entries WHERE queue = ") +
                   session.text(q.queue) + QStringLiteral(" AND id > ") +
                   SqlSession::integer(q.afterId) + QStringLiteral(" ORDER BY id LIMIT ") +
                   SqlSession::integer(MaxFilterScanEntries) + QStringLiteral(") w"));
    if (!st)
        return R::failure(st.error());
    ScanWindow window;
    if (query.next())
        window = {query.value(0).toLongLong(), query.value(1).toLongLong()};
    if (st = session.finish(query); !st)
        return R::failure(st.error());
    return window;
}

} // namespace

Result<MessageListingPage> listQueueMessages(SqlSession &session, const MessageListingQuery &q)
{
    using R = Result<MessageListingPage>;
    const SqlSession &s = session;
    ScanWindow window;
    if (!q.filter.isEmpty()) {
        const Result<ScanWindow> found = scanWindow(session, q);
        if (!found)
            return R::failure(found.error());
        window = found.value();
    }
    // The envelope's size only, never its bytes: from the entry or the shared row.
    QString sql = QStringLiteral("SELECT e.id, e.message_id, e.delivered, m.client_id, m.exchange, "
                                 "m.routing_key, m.sent_time, length(") +
                  QLatin1StringView(EntryEnvelope) +
                  QStringLiteral(") FROM queue_entries e "
                                 "JOIN message_metadata m ON m.message_id = e.message_id "
                                 "WHERE e.queue = ") +
                  s.text(q.queue) + QStringLiteral(" AND e.id > ") + SqlSession::integer(q.afterId);
    if (!q.filter.isEmpty()) {
        const QString pattern = s.text(containsPattern(q.filter));
        sql += QStringLiteral(" AND e.id <= ") + SqlSession::integer(window.lastId) +
               QStringLiteral(" AND (lower(m.client_id) LIKE ") + pattern +
               QStringLiteral(" ESCAPE '\\' OR lower(m.routing_key) LIKE ") + pattern +
               QStringLiteral(" ESCAPE '\\')");
    }
    // One row past the page says whether there is a next one.
    sql += QStringLiteral(" ORDER BY e.id LIMIT ") + SqlSession::integer(q.limit + 1);

    QSqlQuery query = session.newQuery();
    if (Status st = session.run(query, sql); !st)
        return R::failure(st.error());
    MessageListingPage page;
    while (query.next()) {
        if (page.rows.size() == q.limit) {
            page.more = true;
            break;
        }
        MessageListingRow row;
        row.entryId = query.value(0).toLongLong();
        row.messageId = query.value(1).toString();
        row.delivered = query.value(2).toBool();
        row.sender = query.value(3).toString();
        row.exchange = query.value(4).toString();
        row.routingKey = query.value(5).toString();
        row.published = session.toTime(query.value(6));
        row.size = query.value(7).toLongLong();
        page.rows.append(std::move(row));
    }
    if (Status st = session.finish(query); !st)
        return R::failure(st.error());
    if (page.more) {
        page.nextAfterId = page.rows.constLast().entryId;
    } else if (window.entries == MaxFilterScanEntries) {
        // The window ended before the page filled: the entries after it are still to be seen.
        page.more = true;
        page.nextAfterId = window.lastId;
    }
    return page;
}

} // namespace cmq::storage
