// BrokerMetrics: the Prometheus exposition (families(), prometheusText()), beside
// brokermetrics.cpp, which keeps the samples and the admin snapshot's JSON. The table-driven
// figures come from metrictables.h; the labelled families and histograms are built here.

#include "metrics/brokermetrics.h"

#include <algorithm>

#include <QMap>

#include "core/router.h"
#include "limits/memorybudget.h"
#include "limits/ratelimiter.h"
#include "metrics/processinfo.h"
#include "metrics/queuestats.h"

namespace cmq::metrics {

using Type = MetricFamily::Type;

QByteArray BrokerMetrics::prometheusText()
{
    return writePrometheusText(families());
}

static MetricFamily family(const char *name, Type type, const char *help)
{
    MetricFamily f;
    f.name = QString::fromLatin1(name);
    f.type = type;
    f.help = QString::fromLatin1(help);
    return f;
}

static MetricFamily single(const char *name, Type type, const char *help, double value)
{
    MetricFamily f = family(name, type, help);
    f.samples.append(Sample{{}, value});
    return f;
}

QList<MetricFamily> BrokerMetrics::families()
{
    sampleStorage();
    QList<MetricFamily> out;
    const Counters c = counters();

    MetricFamily build = family("ciphermq_build_info", Type::Gauge,
                                "Always 1; the labels name the running version.");
    build.samples.append(
        Sample{{{QStringLiteral("version"), QStringLiteral(CIPHERMQ_VERSION)}}, 1});
    out << build;
    out << single("ciphermq_uptime_seconds", Type::Gauge, "Seconds since the broker started.",
                  double(m_uptime.elapsed()) / 1000.0);
    out << single("ciphermq_process_start_time_seconds", Type::Gauge,
                  "Start time of the broker process, seconds since the Unix epoch.",
                  double(m_startedAt.toMSecsSinceEpoch()) / 1000.0);
    const ProcessInfo process = readProcessInfo();
    out << single("ciphermq_process_resident_memory_bytes", Type::Gauge,
                  "Resident set size of the broker process.", double(process.residentBytes));
    out << single("ciphermq_process_open_fds", Type::Gauge,
                  "File descriptors the broker process has open.", double(process.openFds));

    if (m_sources.cluster) {
        const storage::ClusterStatus cluster = m_sources.cluster();
        out << single("ciphermq_cluster_role", Type::Gauge,
                      "1 while this node is the active one, 0 while it is a standby.",
                      cluster.active ? 1 : 0);
        out << single("ciphermq_cluster_epoch", Type::Gauge,
                      "The leadership epoch: this node's while active, else the newest seen.",
                      double(cluster.epoch));
        out << single("ciphermq_cluster_takeovers_total", Type::Counter,
                      "Times this broker process became the active node.",
                      double(cluster.takeovers));
    }
    if (m_sources.memory) {
        const MemoryFigures m = memoryFigures();
        for (const MemoryFigureSpec &spec : kMemoryFigureSpecs)
            out << single(spec.prometheusName, spec.counter ? Type::Counter : Type::Gauge,
                          spec.help, double(m.*spec.field));
    }

    // Messages (RabbitMQ-like names), traffic, and what the broker holds: one row each in
    // metrictables.h.
    for (const CounterSpec &spec : kCounterSpecs) {
        if (spec.prometheusName)
            out << single(spec.prometheusName, Type::Counter, spec.help, double(spec.value(c)));
    }
    const Totals t = totals();
    for (const GaugeSpec &spec : kTotalSpecs) {
        if (spec.prometheusName)
            out << single(spec.prometheusName, Type::Gauge, spec.help, double(t.*spec.field));
    }

    // Queues: one family per figure, one sample per queue.
    QList<MetricFamily> perQueue;
    for (const QueueFigureSpec &spec : kQueueFigureSpecs)
        perQueue << family(spec.prometheusName, spec.counter ? Type::Counter : Type::Gauge,
                           spec.help);
    if (const Router *router = m_sources.router) {
        for (Queue *queue : router->queues()) {
            const QueueFigures f = queueFigures(*queue);
            const Labels labels{{QStringLiteral("queue"), queue->name()}};
            for (qsizetype i = 0; i < perQueue.size(); ++i)
                perQueue[i].samples.append(Sample{labels, double(kQueueFigureSpecs[i].value(f))});
        }
    }
    out << perQueue;

    // Connections.
    MetricFamily byRole = family("ciphermq_connections", Type::Gauge,
                                 "Open connections by listener and role (a connection whose CN "
                                 "holds several roles counts once per role).");
    QMap<QPair<QString, QString>, int> roleCounts;
    for (const char *listener : {"data", "admin"}) {
        for (const char *role : {"sender", "receiver", "admin"})
            roleCounts[{QString::fromLatin1(listener), QString::fromLatin1(role)}] = 0;
    }
    double slowNow = 0;
    if (m_sources.connections) {
        for (const ConnectionSample &s : m_sources.connections()) {
            if (s.roles & Role::Sender)
                ++roleCounts[{s.listener, QStringLiteral("sender")}];
            if (s.roles & Role::Receiver)
                ++roleCounts[{s.listener, QStringLiteral("receiver")}];
            if (s.roles & Role::Admin)
                ++roleCounts[{s.listener, QStringLiteral("admin")}];
            slowNow += s.slow ? 1 : 0;
        }
    }
    for (auto it = roleCounts.cbegin(); it != roleCounts.cend(); ++it) {
        byRole.samples.append(Sample{{{QStringLiteral("listener"), it.key().first},
                                      {QStringLiteral("role"), it.key().second}},
                                     double(it.value())});
    }
    out << byRole;
    const auto perListener = [](const char *name, const char *help,
                                const QHash<QString, quint64> &counts) {
        MetricFamily f = family(name, Type::Counter, help);
        for (const char *listener : {"data", "admin"}) {
            const QString l = QString::fromLatin1(listener);
            f.samples.append(Sample{{{QStringLiteral("listener"), l}}, double(counts.value(l))});
        }
        return f;
    };
    out << perListener("ciphermq_connections_opened_total",
                       "Connections admitted after the handshake and the identity checks.",
                       m_opened);
    out << perListener("ciphermq_connections_closed_total", "Admitted connections that closed.",
                       m_closed);
    const auto byReason = [](const char *name, const char *help,
                             const QHash<QPair<QString, QString>, quint64> &counts) {
        MetricFamily f = family(name, Type::Counter, help);
        QList<QPair<QString, QString>> keys = counts.keys();
        std::sort(keys.begin(), keys.end());
        for (const auto &key : keys) {
            f.samples.append(Sample{
                {{QStringLiteral("listener"), key.first}, {QStringLiteral("reason"), key.second}},
                double(counts.value(key))});
        }
        return f;
    };
    out << byReason("ciphermq_connections_refused_total",
                    "Connections refused by a check: identity, role, caps, shutdown.", m_refused);
    out << byReason("ciphermq_tls_handshake_failures_total",
                    "TLS handshakes that failed or timed out, by reason.", m_handshakeFailures);
    MetricFamily handshakes = family("ciphermq_tls_handshakes_in_progress", Type::Gauge,
                                     "Connections accepted whose TLS handshake is not done.");
    for (const char *listener : {"data", "admin"}) {
        const QString l = QString::fromLatin1(listener);
        handshakes.samples.append(
            Sample{{{QStringLiteral("listener"), l}},
                   double(m_sources.handshakesInProgress ? m_sources.handshakesInProgress(l) : 0)});
    }
    out << handshakes;
    out << single("ciphermq_slow_connections", Type::Gauge,
                  "Connections whose unsent output is over the limit right now.", slowNow);

    MetricFamily deadLettered =
        family("ciphermq_dead_lettered_total", Type::Counter,
               "Messages sent on to a dead-letter exchange, by reason: rejected (nack drop), "
               "expired, overflow (drop-head), delivery_limit.");
    for (int reason = 0; reason < DeadLetterReasonCount; ++reason) {
        const quint64 n = m_sources.router ? m_sources.router->stats().deadLettered[reason] : 0;
        deadLettered.samples.append(
            Sample{{{QStringLiteral("reason"),
                     QString::fromLatin1(deadLetterReasonName(DeadLetterReason(reason)))}},
                   double(n)});
    }
    out << deadLettered;

    // Rate limits.
    MetricFamily rejections = family("ciphermq_rate_limit_rejections_total", Type::Counter,
                                     "Requests refused by a rate limit, by bucket.");
    for (const limits::Scope scope : {limits::Scope::Cn, limits::Scope::Ip}) {
        for (const limits::BucketKind kind :
             {limits::BucketKind::Global, limits::BucketKind::Publish}) {
            const quint64 n = m_sources.limiter ? m_sources.limiter->rejections(scope, kind) : 0;
            rejections.samples.append(
                Sample{{{QStringLiteral("scope"),
                         scope == limits::Scope::Cn ? QStringLiteral("cn") : QStringLiteral("ip")},
                        {QStringLiteral("bucket"), kind == limits::BucketKind::Global
                                                       ? QStringLiteral("global")
                                                       : QStringLiteral("publish")}},
                       double(n)});
        }
    }
    out << rejections;
    out << single("ciphermq_rate_limit_enabled", Type::Gauge, "1 when rate_limit.enabled is true.",
                  m_sources.limiter && m_sources.limiter->settings().enabled ? 1 : 0);
    out << single("ciphermq_rate_limit_tracked_clients", Type::Gauge,
                  "Per-CN and per-IP entries the rate limiter keeps.",
                  m_sources.limiter ? double(m_sources.limiter->trackedEntries()) : 0);

    // Storage and latency.
    if (const storage::Storage *storage = m_sources.storage) {
        const storage::Storage::Stats s = storage->stats();
        out << single("ciphermq_storage_available", Type::Gauge,
                      "1 while the database is reachable.", storage->isAvailable() ? 1 : 0);
        out << single("ciphermq_storage_outages_total", Type::Counter,
                      "Times the database became unreachable.", double(s.outages));
    }
    MetricFamily batch = family("ciphermq_storage_batch_records", Type::Histogram,
                                "Records per group-commit publish transaction.");
    batch.histograms.append(HistogramSample{{}, &m_batchRecords});
    MetricFamily commit = family("ciphermq_storage_commit_duration_seconds", Type::Histogram,
                                 "Time the storage worker spent on one publish transaction.");
    commit.histograms.append(HistogramSample{{}, &m_commitSeconds});
    MetricFamily latency = family("ciphermq_publish_ack_latency_seconds", Type::Histogram,
                                  "From reading a publish line to its reply (ACK or error).");
    latency.histograms.append(HistogramSample{{}, &m_publishLatency});
    out << batch << commit << latency;
    return out;
}

} // namespace cmq::metrics
