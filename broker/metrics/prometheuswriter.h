#pragma once
// Writes metric families in the Prometheus text exposition format, version 0.0.4
// (# HELP, # TYPE, one sample per line). Pure: families in, bytes out.

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

namespace cmq::metrics {

class Histogram;

using Labels = QList<QPair<QString, QString>>;

struct Sample
{
    Labels labels;
    double value = 0;
};

struct HistogramSample
{
    Labels labels;
    const Histogram *histogram = nullptr;
};

struct MetricFamily
{
    enum class Type { Counter, Gauge, Histogram };
    QString name; // counters end in _total, as the format's conventions want
    QString help;
    Type type = Type::Gauge;
    QList<Sample> samples;
    QList<HistogramSample> histograms; // Type::Histogram only
};

QByteArray writePrometheusText(const QList<MetricFamily> &families);

// Escaping of label values: backslash, double quote and newline.
QString escapeLabelValue(const QString &value);
// Numbers as the format wants them: integers without exponent, NaN, +Inf, -Inf.
QByteArray formatValue(double value);

} // namespace cmq::metrics
