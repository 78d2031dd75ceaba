#include "limits/ratelimiter.h"

#include <algorithm>

namespace cmq::limits {

// A sweep walks every entry; doing it at most this often keeps the per-request cost flat.
constexpr qint64 kSweepIntervalNs = 5LL * 1000 * 1000 * 1000;

static const char *scopeName(Scope scope)
{
    return scope == Scope::Cn ? "cn" : "ip";
}

RateLimiter::RateLimiter(const Config::RateLimit &settings, const Clock &clock,
                         qint64 idleRetentionMs, qsizetype maxIdleEntries)
    : m_settings(settings), m_clock(clock), m_idleRetentionNs(idleRetentionMs * 1000000),
      m_maxIdleEntries(maxIdleEntries), m_lastSweepNs(clock.nowNs())
{
}

QString RateLimiter::ipKey(const QHostAddress &ip)
{
    bool isV4 = false;
    const quint32 v4 = ip.toIPv4Address(&isV4);
    return isV4 ? QHostAddress(v4).toString() : ip.toString();
}

void RateLimiter::configure(const Config::RateLimit &settings)
{
    m_settings = settings;
    const qint64 now = m_clock.nowNs();
    for (Entry &e : m_cn)
        configureEntry(Scope::Cn, e, now);
    for (Entry &e : m_ip)
        configureEntry(Scope::Ip, e, now);
}

void RateLimiter::configureEntry(Scope scope, Entry &e, qint64 now) const
{
    const Config::RateLimit &s = m_settings;
    if (scope == Scope::Cn) {
        e.global.configure(s.globalRps, s.globalBurst, now);
        e.publish.configure(s.publishRps, s.publishBurst, now);
    } else {
        e.global.configure(s.ipGlobalRps, s.ipGlobalBurst, now);
        e.publish.configure(s.ipPublishRps, s.ipPublishBurst, now);
    }
}

RateLimiter::Entry &RateLimiter::entry(Scope scope, const QString &key, qint64 now)
{
    Table &table = scope == Scope::Cn ? m_cn : m_ip;
    auto it = table.find(key);
    if (it == table.end()) {
        const Config::RateLimit &s = m_settings;
        const bool cn = scope == Scope::Cn;
        Entry fresh;
        fresh.global = TokenBucket(cn ? s.globalRps : s.ipGlobalRps,
                                   cn ? s.globalBurst : s.ipGlobalBurst, now);
        fresh.publish = TokenBucket(cn ? s.publishRps : s.ipPublishRps,
                                    cn ? s.publishBurst : s.ipPublishBurst, now);
        it = table.insert(key, fresh);
    }
    it->lastSeenNs = now;
    return *it;
}

Refusal RateLimiter::bucketRefusal(Scope scope, BucketKind kind, const QString &key) const
{
    const bool publish = kind == BucketKind::Publish;
    const Config::RateLimit &s = m_settings;
    const bool cn = scope == Scope::Cn;
    const double rate =
        publish ? (cn ? s.publishRps : s.ipPublishRps) : (cn ? s.globalRps : s.ipGlobalRps);
    const double burst =
        publish ? (cn ? s.publishBurst : s.ipPublishBurst) : (cn ? s.globalBurst : s.ipGlobalBurst);
    return Refusal{.kind = Refusal::Kind::Rate,
                   .scope = scope,
                   .reason = QString::fromLatin1(scopeName(scope)) +
                             (publish ? QStringLiteral("_publish") : QStringLiteral("_global")),
                   .key = key,
                   .bucket = kind,
                   .rate = rate,
                   .burst = burst};
}

std::optional<Refusal> RateLimiter::admitRequest(const QString &cn, const QHostAddress &ip,
                                                 int publishCost)
{
    if (!m_settings.enabled)
        return std::nullopt;
    const qint64 now = m_clock.nowNs();
    maybeSweep(now);
    const QString ipText = ipKey(ip);
    Entry &byCn = entry(Scope::Cn, cn, now);
    Entry &byIp = entry(Scope::Ip, ipText, now);

    struct Check
    {
        Entry *entry;
        Scope scope;
        BucketKind kind;
    };
    Check checks[4] = {{&byCn, Scope::Cn, BucketKind::Global},
                       {&byIp, Scope::Ip, BucketKind::Global},
                       {&byCn, Scope::Cn, BucketKind::Publish},
                       {&byIp, Scope::Ip, BucketKind::Publish}};
    const int count = publishCost > 0 ? 4 : 2;
    const auto bucketOf = [](const Check &c) -> TokenBucket & {
        return c.kind == BucketKind::Global ? c.entry->global : c.entry->publish;
    };
    // Every bucket must have one token before any is charged: a refusal costs nothing.
    for (int i = 0; i < count; ++i) {
        if (!bucketOf(checks[i]).has(now, 1.0)) {
            const Check &c = checks[i];
            ++(c.kind == BucketKind::Global ? c.entry->globalRejected : c.entry->publishRejected);
            ++m_rejections[int(c.scope)][int(c.kind)];
            return bucketRefusal(c.scope, c.kind, c.scope == Scope::Cn ? cn : ipText);
        }
    }
    for (int i = 0; i < count; ++i) {
        const Check &c = checks[i];
        if (c.kind == BucketKind::Global) {
            c.entry->global.take(1.0);
            ++c.entry->globalAccepted;
        } else {
            c.entry->publish.take(double(publishCost));
            ++c.entry->publishAccepted;
        }
    }
    return std::nullopt;
}

std::optional<Refusal> RateLimiter::acquireConnection(const QString &cn, const QHostAddress &ip)
{
    const qint64 now = m_clock.nowNs();
    maybeSweep(now);
    const QString ipText = ipKey(ip);
    Entry &byCn = entry(Scope::Cn, cn, now);
    Entry &byIp = entry(Scope::Ip, ipText, now);
    if (m_settings.enabled) {
        if (byIp.connections >= m_settings.maxConnectionsPerIp) {
            return Refusal{.kind = Refusal::Kind::Connections,
                           .scope = Scope::Ip,
                           .reason = QStringLiteral("ip_limit"),
                           .key = ipText,
                           .limit = m_settings.maxConnectionsPerIp};
        }
        if (byCn.connections >= m_settings.maxConnectionsPerCn) {
            return Refusal{.kind = Refusal::Kind::Connections,
                           .scope = Scope::Cn,
                           .reason = QStringLiteral("cn_limit"),
                           .key = cn,
                           .limit = m_settings.maxConnectionsPerCn};
        }
    }
    for (Entry *e : {&byCn, &byIp}) {
        if (e->connections++ == 0)
            ++m_busyEntries;
    }
    if (trackedEntries() - m_busyEntries > m_maxIdleEntries)
        evictOldestIdle();
    return std::nullopt;
}

void RateLimiter::releaseConnection(const QString &cn, const QHostAddress &ip)
{
    const qint64 now = m_clock.nowNs();
    const auto release = [&](Table &table, const QString &key) {
        auto it = table.find(key);
        // Busy entries are never freed, so a matching acquire always left one here.
        Q_ASSERT(it != table.end() && it->connections > 0);
        if (it == table.end() || it->connections <= 0)
            return;
        it->lastSeenNs = now;
        if (--it->connections == 0)
            --m_busyEntries;
    };
    release(m_cn, cn);
    release(m_ip, ipKey(ip));
    if (trackedEntries() - m_busyEntries > m_maxIdleEntries)
        evictOldestIdle();
}

bool RateLimiter::isFreeable(const Entry &e, qint64 now) const
{
    // A full bucket of a client without connections is exactly what a newcomer gets, so
    // freeing it changes nothing but the counters shown by `ratelimits`.
    return e.connections == 0 && now - e.lastSeenNs >= m_idleRetentionNs && e.global.isFull(now) &&
           e.publish.isFull(now);
}

void RateLimiter::maybeSweep(qint64 now)
{
    if (now - m_lastSweepNs < kSweepIntervalNs)
        return;
    m_lastSweepNs = now;
    sweepTable(m_cn, now);
    sweepTable(m_ip, now);
}

void RateLimiter::sweep()
{
    const qint64 now = m_clock.nowNs();
    m_lastSweepNs = now;
    sweepTable(m_cn, now);
    sweepTable(m_ip, now);
}

void RateLimiter::sweepTable(Table &table, qint64 now)
{
    for (auto it = table.begin(); it != table.end();) {
        if (isFreeable(*it, now))
            it = table.erase(it);
        else
            ++it;
    }
}

void RateLimiter::evictOldestIdle()
{
    // Churn faster than the retention: free the least recently seen idle entries, down to 90%
    // of the cap so this O(n) pass runs once per many new clients, not once per client.
    struct Candidate
    {
        qint64 lastSeenNs;
        Table *table;
        QString key;
    };
    QList<Candidate> idle;
    for (Table *table : {&m_cn, &m_ip}) {
        for (auto it = table->cbegin(); it != table->cend(); ++it) {
            if (it->connections == 0)
                idle.append(Candidate{it->lastSeenNs, table, it.key()});
        }
    }
    const qsizetype keep = m_maxIdleEntries * 9 / 10;
    if (idle.size() <= keep)
        return;
    const qsizetype drop = idle.size() - keep;
    std::nth_element(
        idle.begin(), idle.begin() + drop, idle.end(),
        [](const Candidate &a, const Candidate &b) { return a.lastSeenNs < b.lastSeenNs; });
    for (qsizetype i = 0; i < drop; ++i)
        idle[i].table->remove(idle[i].key);
}

ClientView RateLimiter::view(Scope scope, const QString &key, const Entry &e, qint64 now) const
{
    ClientView v;
    v.scope = scope;
    v.key = key;
    v.connections = e.connections;
    v.connectionLimit =
        scope == Scope::Cn ? m_settings.maxConnectionsPerCn : m_settings.maxConnectionsPerIp;
    v.idleSeconds = double(now - e.lastSeenNs) / 1e9;
    v.global = BucketView{e.global.tokens(now), e.global.rate(), e.global.burst(), e.globalAccepted,
                          e.globalRejected};
    v.publish = BucketView{e.publish.tokens(now), e.publish.rate(), e.publish.burst(),
                           e.publishAccepted, e.publishRejected};
    return v;
}

QList<ClientView> RateLimiter::clients() const
{
    const qint64 now = m_clock.nowNs();
    QList<ClientView> all;
    all.reserve(trackedEntries());
    for (auto it = m_cn.cbegin(); it != m_cn.cend(); ++it)
        all.append(view(Scope::Cn, it.key(), *it, now));
    for (auto it = m_ip.cbegin(); it != m_ip.cend(); ++it)
        all.append(view(Scope::Ip, it.key(), *it, now));
    std::sort(all.begin(), all.end(), [](const ClientView &a, const ClientView &b) {
        return a.scope != b.scope ? a.scope < b.scope : a.key < b.key;
    });
    return all;
}

quint64 RateLimiter::rejections(Scope scope, BucketKind bucket) const
{
    return m_rejections[int(scope)][int(bucket)];
}

quint64 RateLimiter::totalRejections() const
{
    return m_rejections[0][0] + m_rejections[0][1] + m_rejections[1][0] + m_rejections[1][1];
}

} // namespace cmq::limits
