#include "metrics/brokermetrics.h"

#include <QCoreApplication>
#include <QJsonArray>

#include "core/router.h"
#include "limits/memorybudget.h"
#include "limits/ratelimiter.h"
#include "metrics/processinfo.h"
#include "metrics/queuestats.h"

namespace cmq::metrics {

constexpr int kSampleIntervalMs = 1000;

using Type = MetricFamily::Type;

static QString isoTime(const QDateTime &time)
{
    return time.toUTC().toString(Qt::ISODateWithMs);
}

static QList<double> latencyBounds()
{
    // 100 µs to ~6.5 s: group commits take milliseconds, outliers seconds.
    return Histogram::exponentialBounds(0.0001, 2.0, 17);
}

BrokerMetrics::BrokerMetrics(QObject *parent)
    : QObject(parent), m_startedAt(QDateTime::currentDateTimeUtc()),
      m_publishLatency(latencyBounds()),
      m_batchRecords(Histogram::exponentialBounds(1, 2.0, 11)), // 1 .. 1024 (MaxBatchRecords)
      m_commitSeconds(latencyBounds())
{
    m_uptime.start();
    m_sampler.setInterval(kSampleIntervalMs);
    connect(&m_sampler, &QTimer::timeout, this, [this] {
        sampleStorage();
        sampleRates();
        sampleTalkers();
    });
    m_sampler.start();
}

BrokerMetrics::~BrokerMetrics() = default;

void BrokerMetrics::setSources(MetricsSources sources)
{
    m_sources = std::move(sources);
    if (m_sources.storage)
        m_storageSeen = m_sources.storage->stats();
    m_lastSample = counters();
    m_lastSampleMs = m_uptime.elapsed();
    sampleRates();
}

void BrokerMetrics::connectionOpened(const QString &listener)
{
    ++m_opened[listener];
}

void BrokerMetrics::connectionClosed(const ConnectionSample &final)
{
    ++m_closed[final.listener];
    m_closedBytesIn += final.bytesIn;
    m_closedBytesOut += final.bytesOut;
    m_closedSlowEvents += final.slowEvents;
    if (final.listener == QLatin1String("data"))
        m_talkers.connectionClosed(final.talker.cn, final.talker.figures, m_uptime.elapsed());
}

QList<OpenTalker> BrokerMetrics::openTalkers() const
{
    QList<OpenTalker> open;
    if (m_sources.connections) {
        for (const ConnectionSample &s : m_sources.connections()) {
            if (s.listener == QLatin1String("data"))
                open.append(s.talker);
        }
    }
    return open;
}

QList<TalkerView> BrokerMetrics::talkers() const
{
    QList<TalkerView> views = m_talkers.view(openTalkers(), m_uptime.elapsed());
    for (TalkerView &v : views)
        v.rates = m_talkerRates.rates(v.cn);
    return views;
}

void BrokerMetrics::sampleTalkers()
{
    const QList<OpenTalker> open = openTalkers();
    QSet<QString> connected;
    for (const OpenTalker &t : open)
        connected.insert(t.cn);
    const qint64 now = m_uptime.elapsed();
    m_talkers.expire(now, connected);
    m_talkerRates.sample(m_talkers.view(open, now), now);
}

void BrokerMetrics::connectionRefused(const QString &listener, const QString &reason)
{
    ++m_refused[{listener, reason}];
}

void BrokerMetrics::handshakeFailed(const QString &listener, const QString &reason)
{
    ++m_handshakeFailures[{listener, reason}];
}

void BrokerMetrics::publishCompleted(qint64 ns)
{
    m_publishLatency.observe(double(ns) / 1e9);
    // The commit that completed this publish is visible in the storage stats now: folding it
    // in here keeps one batch per observation whenever batches finish one at a time.
    sampleStorage();
}

void BrokerMetrics::sampleStorage()
{
    if (!m_sources.storage)
        return;
    const storage::Storage::Stats now = m_sources.storage->stats();
    const quint64 batches = now.publishBatches - m_storageSeen.publishBatches;
    if (batches == 0) {
        m_storageSeen = now;
        return;
    }
    const double records = double(now.publishRecords - m_storageSeen.publishRecords);
    const double commitMs = now.totalCommitMs - m_storageSeen.totalCommitMs;
    // Counts and sums are exact; when several batches finished between two looks each is
    // placed in the bucket of their average.
    m_batchRecords.observeMany(records / double(batches), batches);
    m_commitSeconds.observeMany(commitMs / 1000.0 / double(batches), batches);
    m_storageSeen = now;
}

Counters BrokerMetrics::counters() const
{
    Counters c;
    if (const Router *router = m_sources.router)
        c.router = router->stats();
    if (m_sources.limiter)
        c.rateLimited = m_sources.limiter->totalRejections();
    for (quint64 n : m_opened)
        c.connectionsOpened += n;
    for (quint64 n : m_closed)
        c.connectionsClosed += n;
    for (quint64 n : m_refused)
        c.connectionsRefused += n;
    for (quint64 n : m_handshakeFailures)
        c.handshakeFailures += n;
    c.bytesIn = m_closedBytesIn;
    c.bytesOut = m_closedBytesOut;
    c.slowEvents = m_closedSlowEvents;
    if (m_sources.connections) {
        for (const ConnectionSample &s : m_sources.connections()) {
            c.bytesIn += s.bytesIn;
            c.bytesOut += s.bytesOut;
            c.slowEvents += s.slowEvents;
        }
    }
    return c;
}

void BrokerMetrics::sampleRates()
{
    const Counters now = counters();
    const qint64 nowMs = m_uptime.elapsed();
    const double seconds = double(qMax<qint64>(1, nowMs - m_lastSampleMs)) / 1000.0;
    const auto rate = [seconds](quint64 later, quint64 earlier) {
        return later >= earlier ? double(later - earlier) / seconds : 0.0;
    };
    m_sampledAt = QDateTime::currentDateTimeUtc();
    m_rates = QJsonObject{
        {QStringLiteral("sampled_at"), isoTime(m_sampledAt)},
        {QStringLiteral("interval_ms"), nowMs - m_lastSampleMs},
        {QStringLiteral("messages_published"),
         rate(messagesReachedRouting(now), messagesReachedRouting(m_lastSample))},
        {QStringLiteral("messages_delivered"),
         rate(now.router.delivered, m_lastSample.router.delivered)},
        {QStringLiteral("messages_acknowledged"),
         rate(now.router.acknowledged, m_lastSample.router.acknowledged)},
        {QStringLiteral("bytes_received"), rate(now.bytesIn, m_lastSample.bytesIn)},
        {QStringLiteral("bytes_sent"), rate(now.bytesOut, m_lastSample.bytesOut)},
    };
    m_lastSample = now;
    m_lastSampleMs = nowMs;
}

QJsonObject BrokerMetrics::brokerJson() const
{
    QJsonObject broker = m_brokerInfo;
    broker[QStringLiteral("pid")] = qint64(QCoreApplication::applicationPid());
    broker[QStringLiteral("started_at")] = isoTime(m_startedAt);
    broker[QStringLiteral("uptime_seconds")] = double(m_uptime.elapsed()) / 1000.0;
    return broker;
}

QJsonObject BrokerMetrics::countersJson() const
{
    const Counters c = counters();
    QJsonObject o;
    for (const CounterSpec &spec : kCounterSpecs)
        o.insert(QLatin1StringView(spec.snapshotName), qint64(spec.value(c)));
    return o;
}

QJsonObject BrokerMetrics::ratesJson() const
{
    return m_rates;
}

Totals BrokerMetrics::totals() const
{
    Totals t;
    if (m_sources.connections) {
        for (const ConnectionSample &s : m_sources.connections())
            ++(s.listener == QLatin1String("admin") ? t.adminConnections : t.connections);
    }
    if (const Router *router = m_sources.router) {
        for (Queue *queue : router->queues()) {
            const QueueFigures f = queueFigures(*queue);
            t.consumers += f.consumers;
            t.messagesReady += f.ready;
            t.messagesUnacked += f.unacked;
            t.messageBytes += f.bytes;
        }
        t.queues = router->queues().size();
        t.exchanges = router->exchanges().size();
        t.bindings = router->bindings().size();
    }
    return t;
}

QJsonObject BrokerMetrics::totalsJson() const
{
    const Totals t = totals();
    QJsonObject o;
    for (const GaugeSpec &spec : kTotalSpecs)
        o.insert(QLatin1StringView(spec.snapshotName), t.*spec.field);
    return o;
}

QJsonObject BrokerMetrics::storageJson() const
{
    if (!m_sources.storage)
        return {};
    const storage::Storage::Stats s = m_sources.storage->stats();
    return QJsonObject{
        {QStringLiteral("available"), m_sources.storage->isAvailable()},
        {QStringLiteral("publish_batches"), qint64(s.publishBatches)},
        {QStringLiteral("publish_records"), qint64(s.publishRecords)},
        {QStringLiteral("last_batch_records"), s.lastBatchRecords},
        {QStringLiteral("max_batch_records"), s.maxBatchRecords},
        {QStringLiteral("last_commit_ms"), s.lastCommitMs},
        {QStringLiteral("max_commit_ms"), s.maxCommitMs},
        {QStringLiteral("mean_commit_ms"),
         s.publishBatches ? s.totalCommitMs / double(s.publishBatches) : 0.0},
        {QStringLiteral("outages"), qint64(s.outages)},
    };
}

QJsonObject BrokerMetrics::clusterJson() const
{
    if (!m_sources.cluster)
        return {};
    const storage::ClusterStatus c = m_sources.cluster();
    return QJsonObject{
        {QStringLiteral("node_id"), c.nodeId},
        {QStringLiteral("role"), c.active ? QStringLiteral("active") : QStringLiteral("standby")},
        {QStringLiteral("epoch"), c.epoch},
        {QStringLiteral("leader_since"),
         c.leaderSince.isValid() ? isoTime(c.leaderSince) : QString()},
        {QStringLiteral("active_node_id"), c.activeNodeId},
        {QStringLiteral("active_address"), c.activeAddress},
        {QStringLiteral("takeovers"), qint64(c.takeovers)},
    };
}

MemoryFigures BrokerMetrics::memoryFigures() const
{
    MemoryFigures f;
    if (const limits::MemoryBudget *m = m_sources.memory) {
        f.budgetBytes = m->budget();
        f.usedBytes = m->used();
        f.messageBytes = m->messageBytes();
        f.connectionBytes = m->connectionBytes();
        f.alarm = m->alarm() ? 1 : 0;
        f.alarmsRaised = qint64(m->alarmsRaised());
        f.publishesRefused = qint64(m->refusals());
    }
    return f;
}

QJsonObject BrokerMetrics::memoryJson() const
{
    if (!m_sources.memory)
        return {};
    const MemoryFigures f = memoryFigures();
    QJsonObject o;
    for (const MemoryFigureSpec &spec : kMemoryFigureSpecs) {
        const qint64 value = f.*spec.field;
        o.insert(QLatin1StringView(spec.snapshotName),
                 spec.field == &MemoryFigures::alarm ? QJsonValue(value != 0) : QJsonValue(value));
    }
    return o;
}

QJsonObject BrokerMetrics::processJson()
{
    const ProcessInfo info = readProcessInfo();
    return QJsonObject{{QStringLiteral("rss_bytes"), info.residentBytes},
                       {QStringLiteral("open_fds"), info.openFds},
                       {QStringLiteral("threads"), info.threads}};
}

} // namespace cmq::metrics
