#include "models/queuemessagemodel.h"

#include <QLocale>

namespace cmq::admingui {

QueueMessageModel::QueueMessageModel(QObject *parent) : JsonTableModel(parent)
{
}

void QueueMessageModel::setQueue(const QString &queue)
{
    m_queue = queue;
    m_pageStarts.clear();
    m_requestedAfter = -1;
    m_more = false;
    update({});
}

void QueueMessageModel::setFilter(const QString &filter)
{
    // The protocol's filter is one word: what follows a blank would be another argument.
    m_filter = filter.trimmed().section(u' ', 0, 0);
    m_pageStarts.clear();
    m_requestedAfter = -1;
}

QString QueueMessageModel::requestFor(qint64 afterId) const
{
    QString line =
        QStringLiteral("queue_messages %1 %2 %3").arg(m_queue).arg(afterId).arg(m_pageRows);
    if (!m_filter.isEmpty())
        line += u' ' + m_filter;
    return line;
}

QString QueueMessageModel::firstPageRequest()
{
    m_pageStarts.clear();
    m_requestedAfter = 0;
    return requestFor(0);
}

QString QueueMessageModel::nextPageRequest()
{
    if (!m_more)
        return {};
    m_requestedAfter = m_nextAfter;
    return requestFor(m_nextAfter);
}

QString QueueMessageModel::previousPageRequest()
{
    if (m_pageStarts.size() < 2)
        return {};
    m_pageStarts.removeLast(); // the current page; applyPage() adds the previous one back
    m_requestedAfter = m_pageStarts.takeLast();
    return requestFor(m_requestedAfter);
}

QString QueueMessageModel::reloadRequest() const
{
    return requestFor(m_pageStarts.isEmpty() ? 0 : m_pageStarts.constLast());
}

bool QueueMessageModel::applyPage(const QJsonObject &page)
{
    if (page.value(u"queue").toString() != m_queue || page.value(u"filter").toString() != m_filter)
        return false;
    const qint64 after = page.value(u"after_id").toInteger();
    const bool reload = !m_pageStarts.isEmpty() && after == m_pageStarts.constLast();
    if (after != m_requestedAfter && !reload)
        return false;
    if (!reload)
        m_pageStarts.append(after);
    m_requestedAfter = -1;
    m_more = page.value(u"more").toBool();
    m_nextAfter = page.value(u"next_after_id").toInteger();
    update(page.value(u"messages").toArray());
    return true;
}

QString QueueMessageModel::keyOf(const QJsonObject &row) const
{
    return QString::number(row.value(u"id").toInteger());
}

QStringList QueueMessageModel::headers() const
{
    return {tr("#"),    tr("Message id"), tr("Sender (CN)"), tr("Routing key"),
            tr("Size"), tr("Age (s)"),    tr("Redelivered"), tr("Deliveries")};
}

QVariant QueueMessageModel::cell(const QJsonObject &row, int column) const
{
    switch (column) {
    case EntryId:
        return row.value(u"id").toInteger();
    case MessageId:
        return row.value(u"message_id").toString();
    case Sender:
        return row.value(u"sender").toString();
    case RoutingKey:
        return row.value(u"routing_key").toString();
    case Size:
        return row.value(u"size").toInteger();
    case Age:
        return row.value(u"age_ms").toInteger() / 1000.0;
    case Redelivered:
        return row.value(u"redelivered").toBool() ? tr("yes") : tr("no");
    case Deliveries:
        return row.value(u"delivery_count").toInteger();
    default:
        return {};
    }
}

} // namespace cmq::admingui
