// Paged queue, connection, rate-limit bucket and talker lists (docs/ADMIN-PROTOCOL.md,
// "Paging"). At 50,000 queues the whole list is megabytes of JSON each second; a page is
// filtered and ordered on plain keys (a number or a string per row), with nth_element +
// partial_sort over the page only, and only the page's rows become JSON.

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "admin/admincontext.h"
#include "admin/adminsession.h"
#include "admin/snapshot.h"
#include "core/router.h"
#include "limits/ratelimiter.h"
#include "metrics/metrictables.h"
#include "metrics/queuestats.h"
#include "metrics/talkertotals.h"
#include "net/session.h"

namespace cmq::snapshot {

namespace {

// What a row is ordered by: a number or a text, then its tie-breaker (queue name or
// connection id), which makes the order total and the pages stable.
template <typename Item> struct Keyed
{
    Item item;
    qint64 number = 0;
    QString text;
    QString tieText;
    qint64 tieNumber = 0;
};

template <typename Item> struct KeyOrder
{
    bool byText;
    bool descending;
    bool operator()(const Keyed<Item> &a, const Keyed<Item> &b) const
    {
        const int c = byText ? a.text.compare(b.text)
                             : (a.number < b.number ? -1 : (a.number > b.number ? 1 : 0));
        if (c != 0)
            return descending ? c > 0 : c < 0;
        if (a.tieNumber != b.tieNumber)
            return a.tieNumber < b.tieNumber;
        return a.tieText < b.tieText;
    }
};

// Orders just enough of `rows` that [offset, offset + limit) holds the page, in order; returns
// that range's bounds.
template <typename Item>
std::pair<qsizetype, qsizetype> orderPage(std::vector<Keyed<Item>> &rows,
                                          const admin::ListPage &page, bool byText)
{
    const KeyOrder<Item> less{byText, page.descending};
    const qsizetype size = qsizetype(rows.size());
    const qsizetype first = std::min<qsizetype>(page.offset, size);
    const qsizetype last = std::min<qsizetype>(first + page.limit, size);
    if (first > 0 && first < size)
        std::nth_element(rows.begin(), rows.begin() + first, rows.end(), less);
    std::partial_sort(rows.begin() + first, rows.begin() + last, rows.end(), less);
    return {first, last};
}

QJsonObject pageInfo(const admin::ListPage &page, const QString &sort, qsizetype matched,
                     qsizetype total)
{
    return QJsonObject{
        {QStringLiteral("offset"), page.offset},
        {QStringLiteral("limit"), page.limit},
        {QStringLiteral("matched"), qint64(matched)},
        {QStringLiteral("total"), qint64(total)},
        {QStringLiteral("sort"), sort},
        {QStringLiteral("order"), page.descending ? QStringLiteral("desc") : QStringLiteral("asc")},
        {QStringLiteral("filter"), page.filter},
    };
}

using QueueNumber = std::function<qint64(Queue &)>;

// The numeric queue keys (the text ones, name and owner, are handled by the caller).
QueueNumber queueNumber(const QString &sort)
{
    for (const metrics::QueueFigureSpec &spec : metrics::kQueueFigureSpecs) {
        if (sort == QLatin1StringView(spec.snapshotName))
            return [value = spec.value](Queue &q) { return value(metrics::queueFigures(q)); };
    }
    if (sort == u"depth")
        return [](Queue &q) { return qint64(q.depth()); };
    if (sort == u"oldest_ready_age_ms") {
        // The older the head, the earlier it was sent: ordering by minus the send time orders
        // by age without reading the clock per queue. Nothing ready is age 0.
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        return [now](Queue &q) {
            return q.ready().empty()
                       ? 0
                       : std::max<qint64>(
                             0, now - q.ready().front().message->sentTime.toMSecsSinceEpoch());
        };
    }
    if (sort == u"inflight")
        return [](Queue &q) { return q.inflight; };
    if (sort == u"max_length")
        return [](Queue &q) { return q.maxLength(); };
    if (sort == u"max_bytes")
        return [](Queue &q) { return q.maxBytes(); };
    if (sort == u"message_ttl_ms")
        return [](Queue &q) { return q.messageTtlMs(); };
    return [](Queue &q) { return qint64(q.deadLetterPolicy().deliveryLimit); }; // delivery_limit
}

bool matches(const QString &text, const QString &filter)
{
    return text.contains(filter, Qt::CaseInsensitive);
}

// A row of the connection list: one of the two listeners' sessions.
struct ConnectionRef
{
    const Session *data = nullptr;
    const AdminSession *admin = nullptr;
    const ClientIdentity &identity() const { return data ? data->identity() : admin->identity(); }
};

// The traffic figures both listeners' connection objects show (the admin listener carries
// no messages: its objects say 0).
struct Traffic
{
    quint64 requests, messagesIn, messagesOut, bytesIn, bytesOut;
};

Traffic trafficOf(const ConnectionRef &c)
{
    if (c.data) {
        const SessionCounters &n = c.data->counters();
        return {n.requestsIn, n.messagesIn, n.deliveriesOut, n.bytesIn, n.bytesOut};
    }
    const AdminCounters &n = c.admin->counters();
    return {n.requestsIn, 0, 0, n.bytesIn, n.bytesOut};
}

qint64 connectionNumber(const ConnectionRef &c, const QString &sort)
{
    const ClientIdentity &who = c.identity();
    if (sort == u"connected_at")
        return who.connectedAt.toMSecsSinceEpoch();
    if (sort == u"not_after")
        return who.certificate.expiryDate().toMSecsSinceEpoch();
    const Traffic t = trafficOf(c);
    if (sort == u"requests")
        return qint64(t.requests);
    if (sort == u"messages_in")
        return qint64(t.messagesIn);
    if (sort == u"messages_out")
        return qint64(t.messagesOut);
    if (sort == u"bytes_in")
        return qint64(t.bytesIn);
    if (sort == u"bytes_out")
        return qint64(t.bytesOut);
    return qint64(who.connectionId); // id
}

// Fractions (tokens, seconds, rates) as a sort key: in thousandths, so they still order.
qint64 milli(double x)
{
    return qint64(std::llround(x * 1000));
}

// A bucket's numeric keys.
qint64 bucketNumber(const limits::ClientView &v, const QString &sort)
{
    const bool publish = sort.startsWith(u"publish_");
    const limits::BucketView &b = publish ? v.publish : v.global;
    if (sort == u"connections")
        return v.connections;
    if (sort == u"connection_limit")
        return v.connectionLimit;
    if (sort == u"idle_seconds")
        return milli(v.idleSeconds);
    if (sort == u"accepted") // both buckets, as the console's column
        return qint64(v.global.accepted + v.publish.accepted);
    if (sort == u"rejected")
        return qint64(v.global.rejected + v.publish.rejected);
    if (sort.endsWith(u"_tokens"))
        return milli(b.tokens);
    if (sort.endsWith(u"_accepted"))
        return qint64(b.accepted);
    if (sort.endsWith(u"_rejected"))
        return qint64(b.rejected);
    return qint64(v.scope); // scope: cn before ip, as the whole list
}

// A talker's numeric keys: its totals and its recent rates.
qint64 talkerNumber(const metrics::TalkerView &v, const QString &sort)
{
    const metrics::TalkerFigures &f = v.figures;
    if (sort == u"connections")
        return v.connections;
    if (sort == u"publishes")
        return qint64(f.publishes);
    if (sort == u"deliveries")
        return qint64(f.deliveries);
    if (sort == u"requests")
        return qint64(f.requests);
    if (sort == u"bytes_in")
        return qint64(f.bytesIn);
    if (sort == u"bytes_out")
        return qint64(f.bytesOut);
    if (sort == u"idle_seconds")
        return milli(v.idleSeconds);
    if (sort == u"deliver_rate")
        return milli(v.rates.deliveries);
    if (sort == u"bytes_in_rate")
        return milli(v.rates.bytesIn);
    if (sort == u"bytes_out_rate")
        return milli(v.rates.bytesOut);
    return milli(v.rates.publishes); // publish_rate
}

// A rate in the page's objects: thousandths are plenty, and keep the line short.
double rateValue(double perSecond)
{
    return double(milli(perSecond)) / 1000.0;
}

// A talker object of a page: the whole list's, plus the rates the page may be sorted by.
QJsonObject talkerWithRates(const metrics::TalkerView &v)
{
    QJsonObject row = talker(v);
    row.insert(QStringLiteral("publish_rate"), rateValue(v.rates.publishes));
    row.insert(QStringLiteral("deliver_rate"), rateValue(v.rates.deliveries));
    row.insert(QStringLiteral("bytes_in_rate"), rateValue(v.rates.bytesIn));
    row.insert(QStringLiteral("bytes_out_rate"), rateValue(v.rates.bytesOut));
    return row;
}

// A page of views named by one text (a bucket's key, a talker's CN): the filter matches the
// name, `byName` orders by it, any other sort by `number(view, sort)`; ties by `tie(view)`,
// then the name, so pages are stable.
template <typename View, typename Name, typename Number, typename Tie, typename Json>
Page namedPage(const QList<View> &all, const admin::ListPage &page, const QString &sort,
               bool byName, Name name, Number number, Tie tie, Json json)
{
    std::vector<Keyed<const View *>> rows;
    rows.reserve(size_t(all.size()));
    for (const View &v : all) {
        const QString &text = name(v);
        if (!page.filter.isEmpty() && !matches(text, page.filter))
            continue;
        Keyed<const View *> row;
        row.item = &v;
        row.tieNumber = tie(v);
        row.tieText = text;
        if (byName)
            row.text = text;
        else
            row.number = number(v, sort);
        rows.push_back(std::move(row));
    }
    const auto [first, last] = orderPage(rows, page, byName);
    Page out;
    for (qsizetype i = first; i < last; ++i)
        out.rows.append(json(*rows[size_t(i)].item));
    out.info = pageInfo(page, sort, qsizetype(rows.size()), all.size());
    return out;
}

} // namespace

Page queuePage(const Router &router, const admin::ListPage &page)
{
    const QString sort = page.sort.isEmpty() ? QStringLiteral("name") : page.sort;
    const bool byText = sort == u"name" || sort == u"owner";
    const QueueNumber number = byText ? QueueNumber() : queueNumber(sort);
    const QHash<QString, Queue *> &all = router.queues();
    std::vector<Keyed<Queue *>> rows;
    rows.reserve(size_t(all.size()));
    for (Queue *q : all) {
        if (!page.filter.isEmpty() && !matches(q->name(), page.filter) &&
            !matches(q->owner(), page.filter))
            continue;
        Keyed<Queue *> row;
        row.item = q;
        row.tieText = q->name();
        if (sort == u"name")
            row.text = q->name();
        else if (sort == u"owner")
            row.text = q->owner();
        else
            row.number = number(*q);
        rows.push_back(std::move(row));
    }
    const auto [first, last] = orderPage(rows, page, byText);
    Page out;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    for (qsizetype i = first; i < last; ++i) {
        out.rows.append(queue(*rows[size_t(i)].item, now));
        out.queueNames.insert(rows[size_t(i)].item->name());
    }
    out.info = pageInfo(page, sort, qsizetype(rows.size()), all.size());
    return out;
}

Page connectionPage(const AdminContext &context, const QList<AdminSession *> &admins,
                    const admin::ListPage &page)
{
    const QString sort = page.sort.isEmpty() ? QStringLiteral("id") : page.sort;
    const bool byText = sort == u"listener" || sort == u"cn" || sort == u"address";
    std::vector<Keyed<ConnectionRef>> rows;
    rows.reserve(size_t(context.dataSessions.size() + admins.size()));
    const auto consider = [&](const ConnectionRef &ref) {
        const ClientIdentity &who = ref.identity();
        const QString address = limits::RateLimiter::ipKey(who.address);
        if (!page.filter.isEmpty() && !matches(who.cn, page.filter) &&
            !matches(address, page.filter) &&
            !QString::number(who.connectionId).contains(page.filter))
            return;
        Keyed<ConnectionRef> row;
        row.item = ref;
        row.tieNumber = qint64(who.connectionId);
        if (sort == u"listener")
            row.text = ref.data ? QStringLiteral("data") : QStringLiteral("admin");
        else if (sort == u"cn")
            row.text = who.cn;
        else if (sort == u"address")
            row.text = address;
        else
            row.number = connectionNumber(ref, sort);
        rows.push_back(std::move(row));
    };
    for (const Session *session : context.dataSessions)
        consider(ConnectionRef{session, nullptr});
    for (const AdminSession *session : admins)
        consider(ConnectionRef{nullptr, session});
    const auto [first, last] = orderPage(rows, page, byText);
    Page out;
    for (qsizetype i = first; i < last; ++i) {
        const ConnectionRef &ref = rows[size_t(i)].item;
        out.rows.append(ref.data ? connection(*ref.data, context.router) : connection(*ref.admin));
    }
    out.info =
        pageInfo(page, sort, qsizetype(rows.size()), context.dataSessions.size() + admins.size());
    return out;
}

Page bucketPage(const QList<limits::ClientView> &all, const admin::ListPage &page)
{
    const QString sort = page.sort.isEmpty() ? QStringLiteral("scope") : page.sort;
    return namedPage(
        all, page, sort, sort == u"key",
        [](const limits::ClientView &v) -> const QString & { return v.key; }, bucketNumber,
        [](const limits::ClientView &v) { return qint64(v.scope); }, // cn before ip
        [](const limits::ClientView &v) { return bucket(v); });
}

Page talkerPage(const QList<metrics::TalkerView> &all, const admin::ListPage &page)
{
    const QString sort = page.sort.isEmpty() ? QStringLiteral("cn") : page.sort;
    return namedPage(
        all, page, sort, sort == u"cn",
        [](const metrics::TalkerView &v) -> const QString & { return v.cn; }, talkerNumber,
        [](const metrics::TalkerView &) { return qint64(0); }, talkerWithRates);
}

} // namespace cmq::snapshot
