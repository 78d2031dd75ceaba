#include "models/lagtrend.h"

#include <algorithm>

#include <QCoreApplication>

namespace cmq::admingui {

LagChange classifyLagChange(const DepthSample &earlier, const DepthSample &later)
{
    const double elapsed = later.seconds - earlier.seconds;
    if (elapsed <= 0)
        return {};
    const double delta = double(later.lagMs - earlier.lagMs);
    const double threshold = std::max(LagTrendMinimumMs, LagTrendShareOfElapsed * elapsed * 1000);
    const LagTrend trend = delta >= threshold    ? LagTrend::Growing
                           : delta <= -threshold ? LagTrend::Shrinking
                                                 : LagTrend::Steady;
    return {trend, delta / elapsed, elapsed};
}

LagChange lagTrendOf(const QueueDepthHistory &history, const QString &queue)
{
    const int count = history.sampleCount(queue);
    if (count < 2)
        return {};
    const DepthSample later = history.sampleAgo(queue, 0);
    // Walk back to the newest sample at least a window old (the oldest one when none is).
    DepthSample earlier = history.sampleAgo(queue, 1);
    for (int back = 1; back < count; ++back) {
        earlier = history.sampleAgo(queue, back);
        if (later.seconds - earlier.seconds >= LagTrendWindowSeconds)
            break;
    }
    return classifyLagChange(earlier, later);
}

QString lagTrendText(LagTrend trend)
{
    switch (trend) {
    case LagTrend::Growing:
        return QCoreApplication::translate("LagTrend", "growing");
    case LagTrend::Shrinking:
        return QCoreApplication::translate("LagTrend", "shrinking");
    case LagTrend::Steady:
        return QCoreApplication::translate("LagTrend", "steady");
    case LagTrend::Unknown:
        break;
    }
    return QStringLiteral("–");
}

} // namespace cmq::admingui
