#include "models/listpager.h"

#include <algorithm>

#include <QJsonArray>
#include <QLocale>

#include "models/connectiontablemodel.h"
#include "models/queuetablemodel.h"
#include "models/ratelimittablemodel.h"
#include "models/talkertablemodel.h"

namespace cmq::admingui {

ListPager::ListPager(QString list, QStringList columnKeys, QObject *parent, QString rowsField)
    : QObject(parent), m_list(std::move(list)), m_columnKeys(std::move(columnKeys)),
      m_rowsField(std::move(rowsField))
{
    m_page.limit = PageRows;
}

ListPager *ListPager::forQueues(QObject *parent)
{
    QStringList keys(QueueTableModel::ColumnCount);
    keys[QueueTableModel::Name] = QStringLiteral("name");
    keys[QueueTableModel::Owner] = QStringLiteral("owner");
    keys[QueueTableModel::Ready] = QStringLiteral("ready");
    keys[QueueTableModel::OldestReadyAge] = QStringLiteral("oldest_ready_age_ms");
    keys[QueueTableModel::Depth] = QStringLiteral("depth");
    keys[QueueTableModel::Unacked] = QStringLiteral("unacked");
    keys[QueueTableModel::Consumers] = QStringLiteral("consumers");
    keys[QueueTableModel::Evicted] = QStringLiteral("evicted");
    keys[QueueTableModel::Limit] = QStringLiteral("max_length");
    keys[QueueTableModel::MessageTtl] = QStringLiteral("message_ttl_ms");
    keys[QueueTableModel::DeliveryLimit] = QStringLiteral("delivery_limit");
    return new ListPager(QStringLiteral("queues"), keys, parent);
}

ListPager *ListPager::forConnections(QObject *parent)
{
    QStringList keys(ConnectionTableModel::ColumnCount);
    keys[ConnectionTableModel::Id] = QStringLiteral("id");
    keys[ConnectionTableModel::Listener] = QStringLiteral("listener");
    keys[ConnectionTableModel::Cn] = QStringLiteral("cn");
    keys[ConnectionTableModel::Address] = QStringLiteral("address");
    keys[ConnectionTableModel::ConnectedSince] = QStringLiteral("connected_at");
    keys[ConnectionTableModel::MessagesIn] = QStringLiteral("messages_in");
    keys[ConnectionTableModel::MessagesOut] = QStringLiteral("messages_out");
    keys[ConnectionTableModel::BytesIn] = QStringLiteral("bytes_in");
    keys[ConnectionTableModel::BytesOut] = QStringLiteral("bytes_out");
    keys[ConnectionTableModel::Expiry] = QStringLiteral("not_after");
    return new ListPager(QStringLiteral("connections"), keys, parent);
}

ListPager *ListPager::forRateLimits(QObject *parent)
{
    // The configured rates are the same for every bucket of a scope: sorted here.
    QStringList keys(RateLimitTableModel::ColumnCount);
    keys[RateLimitTableModel::Scope] = QStringLiteral("scope");
    keys[RateLimitTableModel::Key] = QStringLiteral("key");
    keys[RateLimitTableModel::Connections] = QStringLiteral("connections");
    keys[RateLimitTableModel::GlobalTokens] = QStringLiteral("global_tokens");
    keys[RateLimitTableModel::PublishTokens] = QStringLiteral("publish_tokens");
    keys[RateLimitTableModel::Accepted] = QStringLiteral("accepted");
    keys[RateLimitTableModel::Rejected] = QStringLiteral("rejected");
    return new ListPager(QStringLiteral("ratelimits"), keys, parent, QStringLiteral("buckets"));
}

ListPager *ListPager::forTalkers(QObject *parent)
{
    // Every column: paged, the rates are the broker's own (over its last 10 s), which it sorts
    // by, so a new flooder is on the first page however small its totals.
    QStringList keys(TalkerTableModel::ColumnCount);
    keys[TalkerTableModel::Cn] = QStringLiteral("cn");
    keys[TalkerTableModel::Connections] = QStringLiteral("connections");
    keys[TalkerTableModel::PublishRate] = QStringLiteral("publish_rate");
    keys[TalkerTableModel::DeliverRate] = QStringLiteral("deliver_rate");
    keys[TalkerTableModel::BytesInRate] = QStringLiteral("bytes_in_rate");
    keys[TalkerTableModel::BytesOutRate] = QStringLiteral("bytes_out_rate");
    keys[TalkerTableModel::Publishes] = QStringLiteral("publishes");
    keys[TalkerTableModel::Deliveries] = QStringLiteral("deliveries");
    keys[TalkerTableModel::BytesIn] = QStringLiteral("bytes_in");
    keys[TalkerTableModel::BytesOut] = QStringLiteral("bytes_out");
    keys[TalkerTableModel::Idle] = QStringLiteral("idle_seconds");
    return new ListPager(QStringLiteral("talkers"), keys, parent);
}

void ListPager::followSnapshot(const QJsonObject &snapshot)
{
    const QJsonValue rows = m_rowsField.isEmpty()
                                ? snapshot.value(m_list)
                                : snapshot.value(m_list).toObject().value(m_rowsField);
    if (!rows.isArray())
        return; // the watch leaves this list out
    m_shownRows = int(rows.toArray().size());
    const QJsonObject page = snapshot.value(m_list + QStringLiteral("_page")).toObject();
    // A whole list (or, just after a page was asked for, the last whole one) or a page.
    m_total = page.isEmpty() ? m_shownRows : page.value(u"total").toInteger();
    m_matched = page.isEmpty() ? m_shownRows : page.value(u"matched").toInteger();
    m_shownOffset = page.isEmpty() ? 0 : page.value(u"offset").toInt();
    if (!m_page.paged && m_total >= m_threshold) {
        m_page.paged = true;
        m_page.offset = 0;
        m_page.sort = m_sort;
        m_page.descending = m_descending;
        m_page.filter = m_filter;
        Q_EMIT pageShown();
        Q_EMIT requestChanged();
        return;
    }
    if (m_page.paged && m_total < m_threshold / 2) {
        m_page = admin::ListPage();
        m_page.limit = PageRows;
        Q_EMIT pageShown();
        Q_EMIT requestChanged();
        return;
    }
    Q_EMIT pageShown();
    // Past the end (queues deleted, a narrower filter): the last page instead.
    if (m_page.paged && m_page.offset > 0 && m_page.offset >= m_matched)
        setOffset(int(std::max<qint64>(0, (m_matched - 1) / m_page.limit * m_page.limit)));
}

void ListPager::setFilter(const QString &text)
{
    QString word = text.simplified().section(u' ', 0, 0);
    while (word.toUtf8().size() > admin::MaxPageFilterBytes)
        word.chop(1);
    if (word == m_filter)
        return;
    m_filter = word;
    if (!m_page.paged)
        return;
    m_page.filter = word;
    m_page.offset = 0;
    Q_EMIT requestChanged();
}

void ListPager::setSort(int column, Qt::SortOrder order)
{
    const QString key = m_columnKeys.value(column);
    if (key.isEmpty())
        return;
    const bool descending = order == Qt::DescendingOrder;
    if (key == m_sort && descending == m_descending)
        return;
    m_sort = key;
    m_descending = descending;
    if (!m_page.paged)
        return;
    m_page.sort = key;
    m_page.descending = descending;
    m_page.offset = 0;
    Q_EMIT requestChanged();
}

void ListPager::nextPage()
{
    if (hasNext())
        setOffset(m_page.offset + m_page.limit);
}

void ListPager::previousPage()
{
    setOffset(std::max(0, m_page.offset - m_page.limit));
}

void ListPager::setOffset(int offset)
{
    if (!m_page.paged || offset == m_page.offset)
        return;
    m_page.offset = offset;
    Q_EMIT requestChanged();
}

QString ListPager::summary() const
{
    if (!m_page.paged)
        return {};
    const QLocale locale;
    const QString count = locale.toString(m_total);
    const QString all = m_list == u"queues"        ? tr("%1 queues").arg(count)
                        : m_list == u"connections" ? tr("%1 connections").arg(count)
                        : m_list == u"talkers"     ? tr("%1 identities").arg(count)
                                                   : tr("%1 buckets").arg(count);
    if (m_shownRows == 0)
        return m_matched == 0
                   ? tr("No rows match (%1)").arg(all)
                   : tr("No rows here: %1 match (%2)").arg(locale.toString(m_matched), all);
    const QString rows =
        tr("Rows %1–%2")
            .arg(locale.toString(m_shownOffset + 1), locale.toString(m_shownOffset + m_shownRows));
    if (m_matched == m_total)
        return tr("%1 of %2").arg(rows, all);
    return tr("%1 of %2 matching (%3)").arg(rows, locale.toString(m_matched), all);
}

} // namespace cmq::admingui
