#pragma once
// The JSON views of the admin protocol (docs/ADMIN-PROTOCOL.md, "JSON schemas"): queues,
// exchanges, bindings, connections, rate limits and the whole snapshot. Built on demand from
// the live objects; nothing here is cached.

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QSet>

#include "admin/adminrequest.h"
#include "config/config.h"

namespace cmq {

struct AdminContext;
class AdminSession;
class Queue;
class Router;
class Session;
namespace limits {
class RateLimiter;
struct ClientView;
} // namespace limits
namespace metrics {
struct TalkerView;
} // namespace metrics

namespace snapshot {

QJsonArray queues(const Router &router);
// One queue object; `now` is when its lag is judged.
QJsonObject queue(Queue &queue, const QDateTime &now);
// The first `limit` dead letters ready in `queue`, in delivery order.
QJsonArray deadLetters(Queue &queue, int limit);
QJsonArray exchanges(const Router &router);
// Every binding, or (with `onlyQueues`) those of these queues: a paged snapshot's.
QJsonArray bindings(const Router &router, const QSet<QString> *onlyQueues = nullptr);
QJsonObject connection(const Session &session, const Router &router);
QJsonObject connection(const AdminSession &session);
QJsonArray connections(const AdminContext &context, const QList<AdminSession *> &admins);
// The rate-limit view; `buckets` replaces its whole bucket list (a paged snapshot's page).
QJsonObject rateLimits(const AdminContext &context, const QJsonArray *buckets = nullptr);
// One entry of its "buckets".
QJsonObject bucket(const limits::ClientView &view);
// Per client CN on the data listener: publishes, deliveries, requests and bytes (top talkers).
QJsonArray talkers(const AdminContext &context);
// One entry of it (totals only: the whole list's objects are as before rates existed).
QJsonObject talker(const metrics::TalkerView &view);
// The [rate_limit] rates, bursts and caps (not `enabled`), as the rate-limit view and the reload
// summary show them.
QJsonObject rateLimitSettings(const Config::RateLimit &r);
// snapshotpage.cpp: one page of a list (docs/ADMIN-PROTOCOL.md, "Paging"), filtered and
// sorted first; only the page's rows are turned into JSON.
struct Page
{
    QJsonArray rows;
    QJsonObject info;         // the "<list>_page" object ("queues_page", ...)
    QSet<QString> queueNames; // a queue page's names (its bindings)
};
Page queuePage(const Router &router, const admin::ListPage &page);
Page connectionPage(const AdminContext &context, const QList<AdminSession *> &admins,
                    const admin::ListPage &page);
// `all`: the limiter's clients() (a parameter, so a test can page views of its own).
Page bucketPage(const QList<limits::ClientView> &all, const admin::ListPage &page);
// `all`: BrokerMetrics::talkers(). The page's objects also carry the recent rates
// ("publish_rate", ...), which a page may be sorted by.
Page talkerPage(const QList<metrics::TalkerView> &all, const admin::ListPage &page);
// The `json` reply and each `Snapshot:` line (without "sequence").
QJsonObject full(const AdminContext &context, const QList<AdminSession *> &admins,
                 admin::Sections sections = admin::AllSections,
                 const admin::SnapshotPaging &paging = {});

} // namespace snapshot
} // namespace cmq
