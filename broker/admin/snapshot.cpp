#include "admin/snapshot.h"

#include <algorithm>
#include <tuple>

#include <QJsonDocument>
#include <QSslCertificate>

#include "admin/admincontext.h"
#include "admin/adminsession.h"
#include "core/router.h"
#include "limits/ratelimiter.h"
#include "metrics/brokermetrics.h"
#include "metrics/queuestats.h"
#include "net/session.h"

namespace cmq::snapshot {

static QString isoTime(const QDateTime &time)
{
    return time.isValid() ? time.toUTC().toString(Qt::ISODateWithMs) : QString();
}

static QJsonValue count(quint64 n)
{
    return QJsonValue(qint64(n));
}

QJsonObject queue(Queue &queue, const QDateTime &now)
{
    // Lag as time: how long the next message to be delivered has waited since it was
    // published (0 with nothing ready).
    const qint64 oldestReadyAgeMs =
        queue.ready().empty()
            ? 0
            : std::max<qint64>(0, queue.ready().front().message->sentTime.msecsTo(now));
    QJsonObject o{
        {QStringLiteral("name"), queue.name()},
        {QStringLiteral("owner"), queue.owner()},
        {QStringLiteral("max_length"), queue.maxLength()},
        {QStringLiteral("max_bytes"), queue.maxBytes()},
        {QStringLiteral("overflow"), queue.overflow()},
        {QStringLiteral("message_ttl_ms"), queue.messageTtlMs()},
        {QStringLiteral("dead_letter_exchange"), queue.deadLetterPolicy().exchange},
        {QStringLiteral("dead_letter_routing_key"), queue.deadLetterPolicy().routingKey},
        {QStringLiteral("delivery_limit"), queue.deadLetterPolicy().deliveryLimit},
        {QStringLiteral("dead_letter_overflow"), queue.deadLetterPolicy().onOverflow},
        {QStringLiteral("inflight"), queue.inflight},
        {QStringLiteral("oldest_ready_age_ms"), oldestReadyAgeMs},
    };
    const metrics::QueueFigures f = metrics::queueFigures(queue);
    for (const metrics::QueueFigureSpec &spec : metrics::kQueueFigureSpecs)
        o.insert(QLatin1StringView(spec.snapshotName), spec.value(f));
    return o;
}

QJsonArray queues(const Router &router)
{
    QList<Queue *> sorted = router.queues().values();
    std::sort(sorted.begin(), sorted.end(),
              [](const Queue *a, const Queue *b) { return a->name() < b->name(); });
    QJsonArray out;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    for (Queue *q : sorted)
        out.append(queue(*q, now));
    return out;
}

QJsonArray deadLetters(Queue &queue, int limit)
{
    QJsonArray out;
    for (const ReadyMessage &ready : queue.ready()) {
        if (out.size() >= limit)
            break;
        if (!ready.deadLetter)
            continue;
        const DeadLetterRecord &record = *ready.deadLetter;
        out.append(QJsonObject{
            {QStringLiteral("message_id"), QString::fromUtf8(ready.message->id)},
            {QStringLiteral("sender"), ready.message->sender},
            {QStringLiteral("routing_key"), ready.message->routingKey},
            {QStringLiteral("bytes"), qint64(ready.message->envelope.size())},
            {QStringLiteral("reason"), QString::fromLatin1(deadLetterReasonName(record.reason))},
            {QStringLiteral("original_queue"), record.originalQueue},
            {QStringLiteral("dead_lettered_at"), isoTime(record.at)},
            {QStringLiteral("delivery_count"), record.deliveryCount},
        });
    }
    return out;
}

QJsonArray exchanges(const Router &router)
{
    QHash<QString, int> bindingCounts;
    for (const storage::BindingRecord &b : router.bindings())
        ++bindingCounts[b.exchange];
    QList<ExchangeInfo> sorted = router.exchanges().values();
    std::sort(sorted.begin(), sorted.end(),
              [](const ExchangeInfo &a, const ExchangeInfo &b) { return a.name < b.name; });
    QJsonArray out;
    for (const ExchangeInfo &e : sorted) {
        out.append(QJsonObject{{QStringLiteral("name"), e.name},
                               {QStringLiteral("type"), e.type},
                               {QStringLiteral("creator"), e.creator},
                               {QStringLiteral("bindings"), bindingCounts.value(e.name)}});
    }
    return out;
}

QJsonArray bindings(const Router &router, const QSet<QString> *onlyQueues)
{
    QList<storage::BindingRecord> sorted = router.bindings();
    if (onlyQueues)
        sorted.removeIf([onlyQueues](const storage::BindingRecord &b) {
            return !onlyQueues->contains(b.queue);
        });
    std::sort(sorted.begin(), sorted.end(),
              [](const storage::BindingRecord &a, const storage::BindingRecord &b) {
                  return std::tie(a.exchange, a.routingKey, a.queue) <
                         std::tie(b.exchange, b.routingKey, b.queue);
              });
    QJsonArray out;
    for (const storage::BindingRecord &b : sorted) {
        out.append(QJsonObject{{QStringLiteral("exchange"), b.exchange},
                               {QStringLiteral("routing_key"), b.routingKey},
                               {QStringLiteral("queue"), b.queue}});
    }
    return out;
}

static QString distinguishedName(const QSslCertificate &certificate, bool issuer)
{
    QStringList parts;
    const QList<QByteArray> attributes =
        issuer ? certificate.issuerInfoAttributes() : certificate.subjectInfoAttributes();
    for (const QByteArray &attribute : attributes) {
        const QStringList values =
            issuer ? certificate.issuerInfo(attribute) : certificate.subjectInfo(attribute);
        for (const QString &value : values)
            parts.append(QString::fromLatin1(attribute) + u'=' + value);
    }
    return parts.join(u',');
}

static QJsonArray roleNames(Roles roles)
{
    QJsonArray names;
    if (roles & Role::Sender)
        names.append(QStringLiteral("sender"));
    if (roles & Role::Receiver)
        names.append(QStringLiteral("receiver"));
    if (roles & Role::Admin)
        names.append(QStringLiteral("admin"));
    return names;
}

static QJsonObject identityJson(const ClientIdentity &who, const char *listener)
{
    const QSslCertificate &c = who.certificate;
    return QJsonObject{
        {QStringLiteral("id"), qint64(who.connectionId)},
        {QStringLiteral("listener"), QString::fromLatin1(listener)},
        {QStringLiteral("cn"), who.cn},
        {QStringLiteral("roles"), roleNames(who.roles)},
        {QStringLiteral("address"), limits::RateLimiter::ipKey(who.address)},
        {QStringLiteral("port"), who.port},
        {QStringLiteral("connected_at"), isoTime(who.connectedAt)},
        {QStringLiteral("certificate"),
         QJsonObject{{QStringLiteral("subject"), distinguishedName(c, false)},
                     {QStringLiteral("issuer"), distinguishedName(c, true)},
                     {QStringLiteral("serial"), QString::fromLatin1(c.serialNumber())},
                     {QStringLiteral("not_before"), isoTime(c.effectiveDate())},
                     {QStringLiteral("not_after"), isoTime(c.expiryDate())}}},
    };
}

QJsonObject connection(const Session &session, const Router &router)
{
    // endpointInfo() takes a non-const Endpoint only to look it up.
    const Router::EndpointInfo info = router.endpointInfo(const_cast<Session *>(&session));
    const SessionCounters &c = session.counters();
    QJsonObject o = identityJson(session.identity(), "data");
    o.insert(QStringLiteral("requests"), count(c.requestsIn));
    o.insert(QStringLiteral("messages_in"), count(c.messagesIn));
    o.insert(QStringLiteral("messages_out"), count(c.deliveriesOut));
    o.insert(QStringLiteral("bytes_in"), count(c.bytesIn));
    o.insert(QStringLiteral("bytes_out"), count(c.bytesOut));
    o.insert(QStringLiteral("consumers"), QJsonArray::fromStringList(info.consumedQueues));
    o.insert(QStringLiteral("prefetch"), info.prefetch);
    o.insert(QStringLiteral("unacked"), qint64(info.unacked));
    o.insert(QStringLiteral("heartbeat_sec"), session.heartbeatIntervalSec());
    o.insert(QStringLiteral("output_buffer_bytes"), session.unsentBytes());
    o.insert(QStringLiteral("slow"), session.isBackedUp());
    o.insert(QStringLiteral("slow_events"), count(c.slowEvents));
    return o;
}

QJsonObject connection(const AdminSession &session)
{
    const AdminCounters &c = session.counters();
    QJsonObject o = identityJson(session.identity(), "admin");
    o.insert(QStringLiteral("requests"), count(c.requestsIn));
    o.insert(QStringLiteral("messages_in"), 0);
    o.insert(QStringLiteral("messages_out"), 0);
    o.insert(QStringLiteral("bytes_in"), count(c.bytesIn));
    o.insert(QStringLiteral("bytes_out"), count(c.bytesOut));
    o.insert(QStringLiteral("consumers"), QJsonArray());
    o.insert(QStringLiteral("prefetch"), 0);
    o.insert(QStringLiteral("unacked"), 0);
    o.insert(QStringLiteral("heartbeat_sec"), 0);
    o.insert(QStringLiteral("output_buffer_bytes"), session.unsentBytes());
    o.insert(QStringLiteral("slow"), !session.isKeepingUp());
    o.insert(QStringLiteral("slow_events"), 0);
    o.insert(QStringLiteral("watch_interval_ms"), session.watchIntervalMs());
    return o;
}

QJsonArray connections(const AdminContext &context, const QList<AdminSession *> &admins)
{
    QList<const Session *> data(context.dataSessions.cbegin(), context.dataSessions.cend());
    std::sort(data.begin(), data.end(), [](const Session *a, const Session *b) {
        return a->identity().connectionId < b->identity().connectionId;
    });
    QJsonArray out;
    for (const Session *session : data)
        out.append(connection(*session, context.router));
    QList<AdminSession *> sortedAdmins = admins;
    std::sort(sortedAdmins.begin(), sortedAdmins.end(),
              [](const AdminSession *a, const AdminSession *b) {
                  return a->identity().connectionId < b->identity().connectionId;
              });
    for (const AdminSession *session : sortedAdmins)
        out.append(connection(*session));
    return out;
}

static QJsonObject bucketJson(const limits::BucketView &b)
{
    return QJsonObject{{QStringLiteral("tokens"), b.tokens},
                       {QStringLiteral("rate"), b.rate},
                       {QStringLiteral("burst"), b.burst},
                       {QStringLiteral("accepted"), count(b.accepted)},
                       {QStringLiteral("rejected"), count(b.rejected)}};
}

QJsonObject rateLimitSettings(const Config::RateLimit &r)
{
    return QJsonObject{
        {QStringLiteral("global_rps"), r.globalRps},
        {QStringLiteral("global_burst"), r.globalBurst},
        {QStringLiteral("publish_rps"), r.publishRps},
        {QStringLiteral("publish_burst"), r.publishBurst},
        {QStringLiteral("ip_global_rps"), r.ipGlobalRps},
        {QStringLiteral("ip_global_burst"), r.ipGlobalBurst},
        {QStringLiteral("ip_publish_rps"), r.ipPublishRps},
        {QStringLiteral("ip_publish_burst"), r.ipPublishBurst},
        {QStringLiteral("max_connections_per_ip"), r.maxConnectionsPerIp},
        {QStringLiteral("max_connections_per_cn"), r.maxConnectionsPerCn},
    };
}

QJsonObject bucket(const limits::ClientView &v)
{
    return QJsonObject{
        {QStringLiteral("scope"),
         v.scope == limits::Scope::Cn ? QStringLiteral("cn") : QStringLiteral("ip")},
        {QStringLiteral("key"), v.key},
        {QStringLiteral("connections"), v.connections},
        {QStringLiteral("connection_limit"), v.connectionLimit},
        {QStringLiteral("idle_seconds"), v.idleSeconds},
        {QStringLiteral("global"), bucketJson(v.global)},
        {QStringLiteral("publish"), bucketJson(v.publish)},
    };
}

QJsonObject rateLimits(const AdminContext &context, const QJsonArray *page)
{
    const Config::RateLimit &r = context.limiter.settings();
    const Config::Server &server = context.config.server;
    QJsonObject settings = rateLimitSettings(r);
    settings.insert(QStringLiteral("max_connections"), server.maxConnections);
    settings.insert(QStringLiteral("max_handshakes"), server.maxHandshakes);
    settings.insert(QStringLiteral("max_handshakes_per_ip"), server.maxHandshakesPerIp);
    QJsonArray buckets;
    if (page) {
        buckets = *page;
    } else {
        for (const limits::ClientView &v : context.limiter.clients())
            buckets.append(bucket(v));
    }
    return QJsonObject{
        {QStringLiteral("enabled"), r.enabled},
        {QStringLiteral("settings"), settings},
        {QStringLiteral("connections"), qint64(context.dataSessions.size())},
        {QStringLiteral("handshakes_in_progress"),
         context.dataHandshakesInProgress ? context.dataHandshakesInProgress() : 0},
        {QStringLiteral("tracked"), qint64(context.limiter.trackedEntries())},
        {QStringLiteral("buckets"), buckets},
    };
}

QJsonObject talker(const metrics::TalkerView &v)
{
    return QJsonObject{
        {QStringLiteral("cn"), v.cn},
        {QStringLiteral("connections"), v.connections},
        {QStringLiteral("publishes"), count(v.figures.publishes)},
        {QStringLiteral("deliveries"), count(v.figures.deliveries)},
        {QStringLiteral("requests"), count(v.figures.requests)},
        {QStringLiteral("bytes_in"), count(v.figures.bytesIn)},
        {QStringLiteral("bytes_out"), count(v.figures.bytesOut)},
        {QStringLiteral("idle_seconds"), v.idleSeconds},
    };
}

QJsonArray talkers(const AdminContext &context)
{
    QJsonArray out;
    for (const metrics::TalkerView &v : context.metrics.talkers())
        out.append(talker(v));
    return out;
}

QJsonObject full(const AdminContext &context, const QList<AdminSession *> &admins,
                 admin::Sections sections, const admin::SnapshotPaging &paging)
{
    metrics::BrokerMetrics &m = context.metrics;
    QJsonObject o{
        {QStringLiteral("version"), 1},
        {QStringLiteral("time"), isoTime(QDateTime::currentDateTimeUtc())},
        {QStringLiteral("broker"), m.brokerJson()},
        {QStringLiteral("counters"), m.countersJson()},
        {QStringLiteral("rates"), m.ratesJson()},
        {QStringLiteral("totals"), m.totalsJson()},
        {QStringLiteral("process"), metrics::BrokerMetrics::processJson()},
        {QStringLiteral("storage"), m.storageJson()},
        {QStringLiteral("memory"), m.memoryJson()},
        {QStringLiteral("cluster"), m.clusterJson()},
    };
    Page queueRows;
    if ((sections & admin::Section::Queues) && paging.queues.paged) {
        queueRows = queuePage(context.router, paging.queues);
        o.insert(QStringLiteral("queues"), queueRows.rows);
        o.insert(QStringLiteral("queues_page"), queueRows.info);
    } else if (sections & admin::Section::Queues) {
        o.insert(QStringLiteral("queues"), queues(context.router));
    }
    if (sections & admin::Section::Exchanges)
        o.insert(QStringLiteral("exchanges"), exchanges(context.router));
    if (sections & admin::Section::Bindings)
        o.insert(QStringLiteral("bindings"),
                 bindings(context.router, paging.queues.paged && (sections & admin::Section::Queues)
                                              ? &queueRows.queueNames
                                              : nullptr));
    if ((sections & admin::Section::Connections) && paging.connections.paged) {
        Page rows = connectionPage(context, admins, paging.connections);
        o.insert(QStringLiteral("connections"), rows.rows);
        o.insert(QStringLiteral("connections_page"), rows.info);
    } else if (sections & admin::Section::Connections) {
        o.insert(QStringLiteral("connections"), connections(context, admins));
    }
    if ((sections & admin::Section::RateLimits) && paging.ratelimits.paged) {
        Page rows = bucketPage(context.limiter.clients(), paging.ratelimits);
        o.insert(QStringLiteral("ratelimits"), rateLimits(context, &rows.rows));
        o.insert(QStringLiteral("ratelimits_page"), rows.info);
    } else if (sections & admin::Section::RateLimits) {
        o.insert(QStringLiteral("ratelimits"), rateLimits(context));
    }
    if ((sections & admin::Section::Talkers) && paging.talkers.paged) {
        Page rows = talkerPage(context.metrics.talkers(), paging.talkers);
        o.insert(QStringLiteral("talkers"), rows.rows);
        o.insert(QStringLiteral("talkers_page"), rows.info);
    } else if (sections & admin::Section::Talkers) {
        o.insert(QStringLiteral("talkers"), talkers(context));
    }
    return o;
}

} // namespace cmq::snapshot
