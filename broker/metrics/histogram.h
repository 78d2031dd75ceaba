#pragma once
// A Prometheus-style histogram: fixed upper bounds, a count per bucket, the sum and the count
// of observations. Single-threaded (the event loop); cheap enough for every publish.

#include <QList>
#include <QtGlobal>

namespace cmq::metrics {

class Histogram
{
public:
    explicit Histogram(QList<double> upperBounds); // ascending; +Inf is implicit

    void observe(double value);
    // Adds `count` observations of `value` at once (sum grows by count * value).
    void observeMany(double value, quint64 count);

    const QList<double> &upperBounds() const { return m_bounds; }
    // Cumulative counts per bound, as the exposition format wants them ("le" semantics);
    // the implicit +Inf bucket is count().
    QList<quint64> cumulativeCounts() const;
    quint64 count() const { return m_count; }
    double sum() const { return m_sum; }

    static QList<double> exponentialBounds(double start, double factor, int count);

private:
    QList<double> m_bounds;
    QList<quint64> m_buckets; // per bucket, not cumulative
    quint64 m_count = 0;
    double m_sum = 0;
};

} // namespace cmq::metrics
