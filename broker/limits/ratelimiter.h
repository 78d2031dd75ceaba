#pragma once
// Per-client rate limits (seed section 9, `[rate_limit]`): for every client CN and every source
// IP a global token bucket (every request) and a publish bucket (the per-IP ones with their own
// rates, `ip_*`, which default to the per-CN ones), plus the open-connection
// counts checked against max_connections_per_cn / _per_ip. Entries of clients that went away
// are freed, so memory stays bounded however many CNs and IPs come and go.

#include <optional>

#include <QHash>
#include <QHostAddress>
#include <QList>
#include <QString>

#include "config/config.h"
#include "limits/clock.h"
#include "limits/tokenbucket.h"

namespace cmq::limits {

enum class Scope { Cn, Ip };
enum class BucketKind { Global, Publish };

// Why something was refused, as facts: a metric label and what the reply names. The sentence
// is written by whoever sends it (handlers/refusalreplies.h, protocol/replies.cpp).
struct Refusal
{
    enum class Kind {
        Rate,        // a bucket is empty: bucket, rate, burst
        Connections, // max_connections_per_cn / _per_ip reached: limit
    };
    Kind kind = Kind::Rate;
    Scope scope = Scope::Cn;
    QString reason{}; // "cn_global", "ip_publish", ..., "cn_limit", "ip_limit"
    QString key{};    // the CN, or the IP address as text
    BucketKind bucket = BucketKind::Global;
    double rate = 0; // tokens per second
    double burst = 0;
    int limit = 0;
};

struct BucketView
{
    double tokens = 0;
    double rate = 0;
    double burst = 0;
    quint64 accepted = 0;
    quint64 rejected = 0;
};

struct ClientView
{
    Scope scope = Scope::Cn;
    QString key; // the CN, or the IP address as text
    int connections = 0;
    int connectionLimit = 0;
    double idleSeconds = 0;
    BucketView global;
    BucketView publish;
};

class RateLimiter
{
public:
    // Idle entries are freed after this long without traffic (and once their buckets are full).
    static constexpr qint64 DefaultIdleRetentionMs = 300000;
    // Beyond this many idle entries the least recently seen are freed at once.
    static constexpr qsizetype DefaultMaxIdleEntries = 10000;

    RateLimiter(const Config::RateLimit &settings, const Clock &clock,
                qint64 idleRetentionMs = DefaultIdleRetentionMs,
                qsizetype maxIdleEntries = DefaultMaxIdleEntries);

    // New settings (a reload): existing buckets keep their tokens, capped at the new bursts.
    void configure(const Config::RateLimit &settings);
    const Config::RateLimit &settings() const { return m_settings; }

    // One request from `cn` at `ip`. publishCost is 0 for anything but a publish, 1 for
    // `publish`, N for a `publish_batch` of N messages (which needs one token and takes N).
    // Nothing is taken from any bucket unless every bucket involved allows it.
    std::optional<Refusal> admitRequest(const QString &cn, const QHostAddress &ip, int publishCost);

    // Connection accounting. Always counted, even while disabled, so that enabling the limits
    // by a reload finds true counts; the caps are enforced only while enabled. Every
    // successful acquire must be matched by exactly one release.
    std::optional<Refusal> acquireConnection(const QString &cn, const QHostAddress &ip);
    void releaseConnection(const QString &cn, const QHostAddress &ip);

    QList<ClientView> clients() const;
    qsizetype trackedEntries() const { return m_cn.size() + m_ip.size(); }
    quint64 rejections(Scope scope, BucketKind bucket) const;
    quint64 totalRejections() const;

    // Frees idle entries now (also happens by itself every few seconds of use).
    void sweep();

    // "::ffff:10.0.0.1" and "10.0.0.1" are one client.
    static QString ipKey(const QHostAddress &ip);

private:
    struct Entry
    {
        TokenBucket global;
        TokenBucket publish;
        int connections = 0;
        qint64 lastSeenNs = 0;
        quint64 globalAccepted = 0;
        quint64 globalRejected = 0;
        quint64 publishAccepted = 0;
        quint64 publishRejected = 0;
    };
    using Table = QHash<QString, Entry>;

    Entry &entry(Scope scope, const QString &key, qint64 now);
    void configureEntry(Scope scope, Entry &e, qint64 now) const;
    void maybeSweep(qint64 now);
    void sweepTable(Table &table, qint64 now);
    void evictOldestIdle();
    bool isFreeable(const Entry &e, qint64 now) const;
    ClientView view(Scope scope, const QString &key, const Entry &e, qint64 now) const;
    Refusal bucketRefusal(Scope scope, BucketKind kind, const QString &key) const;

    Config::RateLimit m_settings;
    const Clock &m_clock;
    qint64 m_idleRetentionNs;
    qsizetype m_maxIdleEntries;
    Table m_cn;
    Table m_ip;
    qsizetype m_busyEntries = 0; // entries with open connections: never freed
    qint64 m_lastSweepNs = 0;
    quint64 m_rejections[2][2] = {}; // [Scope][BucketKind]
};

} // namespace cmq::limits
