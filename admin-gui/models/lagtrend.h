#pragma once
// Whether a queue's lag as time (the age of its next message, `oldest_ready_age_ms`) is growing,
// shrinking or steady, from two of the console's successive depth samples. A lag that rises
// about as fast as the clock means nobody is taking messages; small ups and downs are the
// normal gap between messages and count as steady.

#include "models/queuedepthhistory.h"

namespace cmq::admingui {

enum class LagTrend { Unknown = -2, Shrinking = -1, Steady = 0, Growing = 1 };

struct LagChange
{
    LagTrend trend = LagTrend::Unknown;
    double msPerSecond = 0; // the lag's change per second of broker time between the samples
    double overSeconds = 0; // the time between the two samples compared
    bool operator==(const LagChange &) const = default;
};

// The window a trend looks back over: long enough that one slow message does not flip it.
inline constexpr double LagTrendWindowSeconds = 10.0;
// A change counts when the lag moved by at least this much...
inline constexpr double LagTrendMinimumMs = 1000.0;
// ...and by at least this share of the time that passed (1.0: as fast as the clock).
inline constexpr double LagTrendShareOfElapsed = 0.25;

// `earlier` and `later`: two samples of one queue, `later` the newer (pure, for tests).
LagChange classifyLagChange(const DepthSample &earlier, const DepthSample &later);

// The queue's trend over the last LagTrendWindowSeconds of `history` (or over what it holds
// when it covers less); Unknown with fewer than two samples.
LagChange lagTrendOf(const QueueDepthHistory &history, const QString &queue);

// "growing", "shrinking", "steady", or "–" while unknown.
QString lagTrendText(LagTrend trend);

} // namespace cmq::admingui
