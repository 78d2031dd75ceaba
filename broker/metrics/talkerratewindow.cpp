#include "metrics/talkerratewindow.h"

namespace cmq::metrics {

bool TalkerRateWindow::Sample::sameFigures(const Sample &o) const
{
    return publishes == o.publishes && deliveries == o.deliveries && bytesIn == o.bytesIn &&
           bytesOut == o.bytesOut;
}

bool TalkerRateWindow::Sample::below(const Sample &o) const
{
    return publishes < o.publishes || deliveries < o.deliveries || bytesIn < o.bytesIn ||
           bytesOut < o.bytesOut;
}

void TalkerRateWindow::sample(const QList<TalkerView> &talkers, qint64 nowMs)
{
    QHash<QString, Window> windows;
    windows.reserve(talkers.size());
    for (const TalkerView &v : talkers) {
        // Taken, not copied: appending to a shared list would copy it for every identity.
        Window window = m_windows.take(v.cn);
        add(window, Sample{nowMs, v.figures.publishes, v.figures.deliveries, v.figures.bytesIn,
                           v.figures.bytesOut});
        windows.insert(v.cn, std::move(window));
    }
    // What is left was forgotten (idle too long): its history goes with it.
    m_windows = std::move(windows);
}

void TalkerRateWindow::add(Window &window, const Sample &now)
{
    QList<Sample> &s = window.samples;
    // Totals that went down: the identity was forgotten and came back, counting from zero.
    if (!s.isEmpty() && now.below(s.last()))
        s.clear();
    // A quiet stretch needs only its two ends: a sample equal to the one before it and to the
    // new one just moves forward in time. An idle identity so holds two samples, not ten.
    if (s.size() >= 2 && s.last().sameFigures(s[s.size() - 2]) && s.last().sameFigures(now))
        s.last().ms = now.ms;
    else
        s.append(now);
    // The base is the newest sample at or before the window's start; older ones go.
    const qint64 start = now.ms - WindowMs;
    qsizetype stale = 0;
    while (s.size() - stale > 2 && s[stale + 1].ms <= start)
        ++stale;
    s.remove(0, stale);
    // Nothing moved between the base and the next sample: the totals at the window's start
    // were the base's, so the rate is over WindowMs exactly, not over the longer quiet stretch.
    if (s.size() >= 2 && s[0].ms < start && s[0].sameFigures(s[1]))
        s[0].ms = start;
    if (s.size() < 2 || s.last().ms <= s.first().ms) {
        window.rates = {};
        return;
    }
    const Sample &first = s.first();
    const double seconds = double(now.ms - first.ms) / 1000.0;
    window.rates = TalkerRates{double(now.publishes - first.publishes) / seconds,
                               double(now.deliveries - first.deliveries) / seconds,
                               double(now.bytesIn - first.bytesIn) / seconds,
                               double(now.bytesOut - first.bytesOut) / seconds};
}

} // namespace cmq::metrics
