#pragma once
// The broker's metrics registry: event counters that nothing else keeps (connections opened,
// refused and failed by reason, traffic of closed connections), the latency and batch-size
// histograms, and a once-a-second sampler for rates. Everything else (router, queue, storage
// and rate-limit counters) is read live from its owner when metrics are collected, so the
// numbers in `metrics`, `json` and /metrics are the same numbers.

#include <functional>

#include <QDateTime>
#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QTimer>

#include "acl/aclmanager.h"
#include "metrics/histogram.h"
#include "metrics/metrictables.h"
#include "metrics/prometheuswriter.h"
#include "metrics/talkerratewindow.h"
#include "metrics/talkertotals.h"
#include "storage/leaderelection.h"
#include "storage/storage.h"

namespace cmq {
class Router;
namespace limits {
class MemoryBudget;
class RateLimiter;
} // namespace limits
} // namespace cmq

namespace cmq::metrics {

// One open connection, as the metrics see it.
struct ConnectionSample
{
    QString listener; // "data" or "admin"
    Roles roles;
    quint64 bytesIn = 0;
    quint64 bytesOut = 0;
    quint64 slowEvents = 0;
    bool slow = false;
    OpenTalker talker; // data connections: its CN and what it did (the top talkers)
};

// Where live numbers come from; set once by the broker.
struct MetricsSources
{
    const Router *router = nullptr;
    const storage::Storage *storage = nullptr;
    const limits::RateLimiter *limiter = nullptr;
    const limits::MemoryBudget *memory = nullptr;
    std::function<QList<ConnectionSample>()> connections;
    std::function<int(const QString &listener)> handshakesInProgress;
    std::function<storage::ClusterStatus()> cluster; // this node's leadership
};

class BrokerMetrics final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(BrokerMetrics)

public:
    explicit BrokerMetrics(QObject *parent = nullptr);
    ~BrokerMetrics() override;

    void setSources(MetricsSources sources);
    // Static facts for the snapshot's "broker" section.
    void setBrokerInfo(QJsonObject info) { m_brokerInfo = std::move(info); }

    // Events, as they happen.
    void connectionOpened(const QString &listener);
    // `final` is what the connection did over its life; it joins the totals.
    void connectionClosed(const ConnectionSample &final);
    void connectionRefused(const QString &listener, const QString &reason);
    void handshakeFailed(const QString &listener, const QString &reason);
    // A publish or publish_batch reply completed, `ns` after its request line was read.
    void publishCompleted(qint64 ns);

    Counters counters() const;
    Totals totals() const;
    MemoryFigures memoryFigures() const;

    // The whole registry, Prometheus text format 0.0.4 (without the admin protocol's "# EOF").
    QByteArray prometheusText();
    QList<MetricFamily> families();

    // Scalar sections of the admin snapshot (docs/ADMIN-PROTOCOL.md).
    QJsonObject brokerJson() const;
    QJsonObject countersJson() const;
    QJsonObject ratesJson() const;
    QJsonObject totalsJson() const;
    QJsonObject storageJson() const;
    QJsonObject clusterJson() const; // the snapshot's "cluster" section
    QJsonObject memoryJson() const;
    static QJsonObject processJson();
    // Per client CN on the data listener (docs/ADMIN-PROTOCOL.md, "Talker object"), with the
    // rates of the last sample.
    QList<TalkerView> talkers() const;

    const Histogram &publishLatency() const { return m_publishLatency; }
    const Histogram &batchRecords() const { return m_batchRecords; }
    const Histogram &commitSeconds() const { return m_commitSeconds; }

    // Folds storage batches committed since the last look into the histograms.
    void sampleStorage();

private:
    void sampleRates();
    QList<OpenTalker> openTalkers() const;
    // Forgets talkers idle too long, then samples the others' totals for their recent rates.
    void sampleTalkers();

    MetricsSources m_sources;
    QJsonObject m_brokerInfo;
    QDateTime m_startedAt;
    QElapsedTimer m_uptime;

    QHash<QString, quint64> m_opened;                  // listener → count
    QHash<QString, quint64> m_closed;                  // listener → count
    QHash<QPair<QString, QString>, quint64> m_refused; // (listener, reason) → count
    QHash<QPair<QString, QString>, quint64> m_handshakeFailures;
    quint64 m_closedBytesIn = 0;
    quint64 m_closedBytesOut = 0;
    quint64 m_closedSlowEvents = 0;
    TalkerTotals m_talkers;
    TalkerRateWindow m_talkerRates;

    Histogram m_publishLatency;
    Histogram m_batchRecords;
    Histogram m_commitSeconds;
    storage::Storage::Stats m_storageSeen;

    // The periodic part of the snapshot.
    QTimer m_sampler;
    Counters m_lastSample;
    qint64 m_lastSampleMs = 0;
    QDateTime m_sampledAt;
    QJsonObject m_rates;
};

} // namespace cmq::metrics
