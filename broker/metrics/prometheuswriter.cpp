#include "metrics/prometheuswriter.h"

#include <cmath>

#include <QLocale>

#include "metrics/histogram.h"

namespace cmq::metrics {

QString escapeLabelValue(const QString &value)
{
    QString escaped;
    escaped.reserve(value.size());
    for (const QChar c : value) {
        if (c == u'\\')
            escaped += QStringLiteral("\\\\");
        else if (c == u'"')
            escaped += QStringLiteral("\\\"");
        else if (c == u'\n')
            escaped += QStringLiteral("\\n");
        else
            escaped += c;
    }
    return escaped;
}

static QString escapeHelp(const QString &help)
{
    QString escaped = help;
    escaped.replace(u'\\', QStringLiteral("\\\\")).replace(u'\n', QStringLiteral("\\n"));
    return escaped;
}

QByteArray formatValue(double value)
{
    if (std::isnan(value))
        return "NaN";
    if (std::isinf(value))
        return value > 0 ? "+Inf" : "-Inf";
    if (value == std::floor(value) && std::fabs(value) < 9.0e15)
        return QByteArray::number(qint64(value));
    // Plain decimals in the usual range (bucket bounds read "0.0001", not "1e-04").
    const double magnitude = std::fabs(value);
    const char format = magnitude >= 1e-6 && magnitude < 1e15 ? 'f' : 'g';
    return QString::number(value, format, QLocale::FloatingPointShortest).toLatin1();
}

static void writeLabels(QByteArray &out, const Labels &labels, const QString &extraName = {},
                        const QByteArray &extraValue = {})
{
    if (labels.isEmpty() && extraName.isEmpty())
        return;
    out += '{';
    bool first = true;
    for (const auto &[name, value] : labels) {
        if (!first)
            out += ',';
        first = false;
        out += name.toUtf8() + "=\"" + escapeLabelValue(value).toUtf8() + '"';
    }
    if (!extraName.isEmpty()) {
        if (!first)
            out += ',';
        out += extraName.toUtf8() + "=\"" + extraValue + '"';
    }
    out += '}';
}

static const char *typeName(MetricFamily::Type type)
{
    switch (type) {
    case MetricFamily::Type::Counter:
        return "counter";
    case MetricFamily::Type::Gauge:
        return "gauge";
    case MetricFamily::Type::Histogram:
        return "histogram";
    }
    return "untyped";
}

QByteArray writePrometheusText(const QList<MetricFamily> &families)
{
    QByteArray out;
    out.reserve(16384);
    for (const MetricFamily &family : families) {
        const QByteArray name = family.name.toUtf8();
        out += "# HELP " + name + ' ' + escapeHelp(family.help).toUtf8() + '\n';
        out += "# TYPE " + name + ' ' + typeName(family.type) + '\n';
        for (const Sample &sample : family.samples) {
            out += name;
            writeLabels(out, sample.labels);
            out += ' ' + formatValue(sample.value) + '\n';
        }
        for (const HistogramSample &h : family.histograms) {
            const QList<double> &bounds = h.histogram->upperBounds();
            const QList<quint64> cumulative = h.histogram->cumulativeCounts();
            for (qsizetype i = 0; i < bounds.size(); ++i) {
                out += name + "_bucket";
                writeLabels(out, h.labels, QStringLiteral("le"), formatValue(bounds[i]));
                out += ' ' + QByteArray::number(cumulative[i]) + '\n';
            }
            out += name + "_bucket";
            writeLabels(out, h.labels, QStringLiteral("le"), "+Inf");
            out += ' ' + QByteArray::number(h.histogram->count()) + '\n';
            out += name + "_sum";
            writeLabels(out, h.labels);
            out += ' ' + formatValue(h.histogram->sum()) + '\n';
            out += name + "_count";
            writeLabels(out, h.labels);
            out += ' ' + QByteArray::number(h.histogram->count()) + '\n';
        }
    }
    return out;
}

} // namespace cmq::metrics
