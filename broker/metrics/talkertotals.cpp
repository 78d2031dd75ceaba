#include "metrics/talkertotals.h"

#include <algorithm>

#include <QMap>

namespace cmq::metrics {

TalkerFigures &TalkerFigures::operator+=(const TalkerFigures &other)
{
    publishes += other.publishes;
    deliveries += other.deliveries;
    requests += other.requests;
    bytesIn += other.bytesIn;
    bytesOut += other.bytesOut;
    return *this;
}

TalkerTotals::TalkerTotals(qint64 retentionMs, int maxIdle)
    : m_retentionMs(retentionMs), m_maxIdle(maxIdle)
{
}

void TalkerTotals::connectionClosed(const QString &cn, const TalkerFigures &final, qint64 nowMs)
{
    Closed &entry = m_closed[cn];
    entry.figures += final;
    entry.lastClosedMs = nowMs;
}

void TalkerTotals::expire(qint64 nowMs, const QSet<QString> &connected)
{
    QList<std::pair<qint64, QString>> idle; // (last closed, cn)
    for (auto it = m_closed.begin(); it != m_closed.end();) {
        if (connected.contains(it.key())) {
            ++it;
        } else if (nowMs - it->lastClosedMs >= m_retentionMs) {
            it = m_closed.erase(it);
        } else {
            idle.append({it->lastClosedMs, it.key()});
            ++it;
        }
    }
    if (idle.size() <= m_maxIdle)
        return;
    const qsizetype excess = idle.size() - m_maxIdle;
    std::partial_sort(idle.begin(), idle.begin() + excess, idle.end());
    for (qsizetype i = 0; i < excess; ++i)
        m_closed.remove(idle[i].second);
}

QList<TalkerView> TalkerTotals::view(const QList<OpenTalker> &open, qint64 nowMs) const
{
    QMap<QString, TalkerView> byCn; // sorted by CN
    for (const OpenTalker &connection : open) {
        TalkerView &v = byCn[connection.cn];
        v.cn = connection.cn;
        ++v.connections;
        v.figures += connection.figures;
    }
    for (auto it = m_closed.cbegin(); it != m_closed.cend(); ++it) {
        TalkerView &v = byCn[it.key()];
        v.cn = it.key();
        v.figures += it->figures;
        if (v.connections == 0)
            v.idleSeconds = double(std::max<qint64>(0, nowMs - it->lastClosedMs)) / 1000.0;
    }
    return byCn.values();
}

} // namespace cmq::metrics
