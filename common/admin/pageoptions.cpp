// The page options of `json` and `watch` (docs/ADMIN-PROTOCOL.md, "Paging"): which lists take
// them, their sort keys, one option's parse and the options written back as arguments. Kept
// apart from adminrequestparser.cpp, which calls parsePageOption() for each `<list>.<option>=`.

#include <algorithm>
#include <iterator>

#include "admin/adminrequest.h"
#include "admin/adminrequest_p.h"

namespace cmq::admin {

namespace {

constexpr const char *queueSorts[] = {
    "name",          "owner",          "ready",
    "unacked",       "depth",          "consumers",
    "bytes",         "counted",        "oldest_ready_age_ms",
    "published",     "delivered",      "acknowledged",
    "redelivered",   "evicted",        "expired",
    "dead_lettered", "inflight",       "max_length",
    "max_bytes",     "message_ttl_ms", "delivery_limit",
};
constexpr const char *connectionSorts[] = {
    "id",          "listener",     "cn",       "address",   "connected_at", "requests",
    "messages_in", "messages_out", "bytes_in", "bytes_out", "not_after",
};

template <size_t N> QStringList keyList(const char *const (&keys)[N])
{
    QStringList list;
    for (const char *key : keys)
        list.append(QString::fromLatin1(key));
    return list;
}

// A bucket's fields; `accepted` and `rejected` are its two buckets' sums (the console's columns).
constexpr const char *rateLimitSorts[] = {
    "scope",
    "key",
    "connections",
    "connection_limit",
    "idle_seconds",
    "global_tokens",
    "global_accepted",
    "global_rejected",
    "publish_tokens",
    "publish_accepted",
    "publish_rejected",
    "accepted",
    "rejected",
};

// A talker's fields, and its recent rates (per second over the last 10 s, kept by the broker):
// a page ordered by totals would hide a new flooder behind the long-lived identities.
constexpr const char *talkerSorts[] = {
    "cn",        "connections",  "publishes",    "deliveries",   "requests",      "bytes_in",
    "bytes_out", "idle_seconds", "publish_rate", "deliver_rate", "bytes_in_rate", "bytes_out_rate",
};

constexpr const char *pageOptionNames[] = {"filter", "sort", "order", "offset", "limit"};

// The lists that take page options: their name, the section that carries them, their sort
// keys and where a request keeps their page.
struct PagedList
{
    const char *name;
    Section section;
    const QStringList &(*sortKeys)();
    ListPage SnapshotPaging::*page;
};
const PagedList pagedLists[] = {
    {"queues", Section::Queues, &queueSortKeys, &SnapshotPaging::queues},
    {"connections", Section::Connections, &connectionSortKeys, &SnapshotPaging::connections},
    {"ratelimits", Section::RateLimits, &rateLimitSortKeys, &SnapshotPaging::ratelimits},
    {"talkers", Section::Talkers, &talkerSortKeys, &SnapshotPaging::talkers},
};
// `seen` in parsePageOption() has 8 bits per list.
static_assert(std::size(pagedLists) * 8 <= 32);

} // namespace

const QStringList &queueSortKeys()
{
    static const QStringList keys = keyList(queueSorts);
    return keys;
}

const QStringList &connectionSortKeys()
{
    static const QStringList keys = keyList(connectionSorts);
    return keys;
}

const QStringList &rateLimitSortKeys()
{
    static const QStringList keys = keyList(rateLimitSorts);
    return keys;
}

const QStringList &talkerSortKeys()
{
    static const QStringList keys = keyList(talkerSorts);
    return keys;
}

static void appendPageArguments(QStringList &out, const char *list, const ListPage &page)
{
    if (!page.paged)
        return;
    const QString prefix = QString::fromLatin1(list) + u'.';
    if (!page.filter.isEmpty())
        out.append(prefix + QStringLiteral("filter=") + page.filter);
    if (!page.sort.isEmpty())
        out.append(prefix + QStringLiteral("sort=") + page.sort);
    if (page.descending)
        out.append(prefix + QStringLiteral("order=desc"));
    if (page.offset != 0)
        out.append(prefix + QStringLiteral("offset=") + QString::number(page.offset));
    // Always written: a paged list with every other option at its default still says so.
    out.append(prefix + QStringLiteral("limit=") + QString::number(page.limit));
}

QString pagingArguments(const SnapshotPaging &paging)
{
    QStringList out;
    for (const PagedList &list : pagedLists)
        appendPageArguments(out, list.name, paging.*(list.page));
    return out.join(u' ');
}

namespace detail {

QByteArray parsePageOption(QByteArrayView arg, Sections allowed, SnapshotPaging &paging,
                           quint32 &seen)
{
    const qsizetype equals = arg.indexOf('=');
    const QByteArrayView name = arg.first(equals);
    const QByteArrayView value = arg.sliced(equals + 1);
    const qsizetype dot = name.indexOf('.');
    const QByteArrayView list = dot < 0 ? QByteArrayView() : name.first(dot);
    const QByteArrayView option = dot < 0 ? QByteArrayView() : name.sliced(dot + 1);
    const auto paged = std::find_if(std::begin(pagedLists), std::end(pagedLists),
                                    [&](const PagedList &l) { return list == l.name; });
    if (paged == std::end(pagedLists))
        return "Invalid page option '" + shortText(arg) +
               "': expected queues.<option>=<value>, connections.<option>=<value>, "
               "ratelimits.<option>=<value> or talkers.<option>=<value>";
    const auto known = std::find_if(std::begin(pageOptionNames), std::end(pageOptionNames),
                                    [&](const char *o) { return option == o; });
    if (known == std::end(pageOptionNames))
        return "Invalid page option '" + shortText(arg) +
               "': the options are filter, sort, order, offset and limit";
    if (!(allowed & paged->section))
        return "Page option '" + shortText(name) + "' for a list the watch leaves out";
    const quint32 bit =
        1u << (8 * (paged - std::begin(pagedLists)) + (known - std::begin(pageOptionNames)));
    if (seen & bit)
        return "Repeated page option '" + shortText(name) + "'";
    seen |= bit;
    ListPage &page = paging.*(paged->page);
    page.paged = true;
    quint64 number = 0;
    if (option == "filter") {
        if (value.isEmpty() || value.size() > MaxPageFilterBytes)
            return "Invalid filter: expected 1 to " + QByteArray::number(MaxPageFilterBytes) +
                   " bytes";
        page.filter = QString::fromUtf8(value);
    } else if (option == "sort") {
        const QStringList &keys = paged->sortKeys();
        page.sort = QString::fromUtf8(value);
        if (!keys.contains(page.sort))
            return "Invalid sort key '" + shortText(value) + "' for " + list.toByteArray() +
                   ": expected one of " + keys.join(QStringLiteral(", ")).toUtf8();
    } else if (option == "order") {
        if (value != "asc" && value != "desc")
            return "Invalid order '" + shortText(value) + "': expected asc or desc";
        page.descending = value == "desc";
    } else if (option == "offset") {
        if (!parseNumber(value, MaxPageOffset, number))
            return "Invalid offset: expected a number from 0 to " +
                   QByteArray::number(MaxPageOffset);
        page.offset = int(number);
    } else {
        if (!parseNumber(value, MaxPageRows, number) || number == 0)
            return "Invalid limit: expected a number from 1 to " + QByteArray::number(MaxPageRows);
        page.limit = int(number);
    }
    return {};
}

} // namespace detail

} // namespace cmq::admin
