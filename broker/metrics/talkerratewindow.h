#pragma once
// Recent rates per client identity: publishes, deliveries and bytes per second over the last
// WindowMs, from the identities' totals sampled once a second. The broker keeps them so the
// talker list can be paged by rate: a page ordered by totals would hide a new flooder behind
// the long-lived identities (docs/ADMIN-PROTOCOL.md, "Talker object").

#include <QHash>
#include <QList>
#include <QString>

#include "metrics/talkertotals.h"

namespace cmq::metrics {

class TalkerRateWindow final
{
public:
    static constexpr qint64 WindowMs = 10 * 1000;

    // One sample of every identity's totals at `nowMs` (monotonic); an identity not in
    // `talkers` (forgotten by TalkerTotals) is forgotten here too.
    void sample(const QList<TalkerView> &talkers, qint64 nowMs);
    // As of the last sample; zero for an identity sampled once or never.
    TalkerRates rates(const QString &cn) const { return m_windows.value(cn).rates; }
    qsizetype tracked() const { return m_windows.size(); }
    // Samples held for `cn`, for tests: a quiet identity holds two at most.
    qsizetype samplesOf(const QString &cn) const { return m_windows.value(cn).samples.size(); }

private:
    struct Sample
    {
        qint64 ms = 0;
        quint64 publishes = 0;
        quint64 deliveries = 0;
        quint64 bytesIn = 0;
        quint64 bytesOut = 0;
        bool sameFigures(const Sample &other) const;
        bool below(const Sample &other) const; // some total went down
    };
    struct Window
    {
        QList<Sample> samples; // oldest first; the first is at or before the window's start
        TalkerRates rates;
    };
    static void add(Window &window, const Sample &now);

    QHash<QString, Window> m_windows;
};

} // namespace cmq::metrics
