// The Prometheus text exposition writer: exact output for counters, gauges with labels and
// histograms, label-value and help escaping, and number formatting.

#include <QTest>

#include "metrics/histogram.h"
#include "metrics/prometheuswriter.h"

using namespace cmq::metrics;

class tst_PrometheusWriter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void exactText();
    void escaping_data();
    void escaping();
    void values_data();
    void values();
};

void tst_PrometheusWriter::exactText()
{
    MetricFamily counter{QStringLiteral("cmq_things_total"),
                         QStringLiteral("Things."),
                         MetricFamily::Type::Counter,
                         {Sample{{}, 3}},
                         {}};
    MetricFamily gauge{QStringLiteral("cmq_depth"),
                       QStringLiteral("Depth.\nSecond line \\ here."),
                       MetricFamily::Type::Gauge,
                       {Sample{{{QStringLiteral("queue"), QStringLiteral("a")},
                                {QStringLiteral("x"), QStringLiteral("b")}},
                               1.5}},
                       {}};
    MetricFamily empty{QStringLiteral("cmq_none"),
                       QStringLiteral("Nothing yet."),
                       MetricFamily::Type::Gauge,
                       {},
                       {}};
    Histogram h({0.5, 1});
    h.observe(0.25);
    h.observe(3);
    MetricFamily histogram{QStringLiteral("cmq_latency_seconds"),
                           QStringLiteral("Latency."),
                           MetricFamily::Type::Histogram,
                           {},
                           {HistogramSample{{{QStringLiteral("op"), QStringLiteral("p")}}, &h}}};
    const QByteArray expected = "# HELP cmq_things_total Things.\n"
                                "# TYPE cmq_things_total counter\n"
                                "cmq_things_total 3\n"
                                "# HELP cmq_depth Depth.\\nSecond line \\\\ here.\n"
                                "# TYPE cmq_depth gauge\n"
                                "cmq_depth{queue=\"a\",x=\"b\"} 1.5\n"
                                "# HELP cmq_none Nothing yet.\n"
                                "# TYPE cmq_none gauge\n"
                                "# HELP cmq_latency_seconds Latency.\n"
                                "# TYPE cmq_latency_seconds histogram\n"
                                "cmq_latency_seconds_bucket{op=\"p\",le=\"0.5\"} 1\n"
                                "cmq_latency_seconds_bucket{op=\"p\",le=\"1\"} 1\n"
                                "cmq_latency_seconds_bucket{op=\"p\",le=\"+Inf\"} 2\n"
                                "cmq_latency_seconds_sum{op=\"p\"} 3.25\n"
                                "cmq_latency_seconds_count{op=\"p\"} 2\n";
    QCOMPARE(writePrometheusText({counter, gauge, empty, histogram}), expected);
}

void tst_PrometheusWriter::escaping_data()
{
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("escaped");
    QTest::newRow("plain") << "receiver_1_queue"
                           << "receiver_1_queue";
    QTest::newRow("quote") << "a\"b"
                           << "a\\\"b";
    QTest::newRow("backslash") << "a\\b"
                               << "a\\\\b";
    QTest::newRow("newline") << "a\nb"
                             << "a\\nb";
    QTest::newRow("unicode kept") << QStringLiteral("صف") << QStringLiteral("صف");
}

void tst_PrometheusWriter::escaping()
{
    QFETCH(QString, value);
    QFETCH(QString, escaped);
    QCOMPARE(escapeLabelValue(value), escaped);
}

void tst_PrometheusWriter::values_data()
{
    QTest::addColumn<double>("value");
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("zero") << 0.0 << QByteArray("0");
    QTest::newRow("integer") << 123456789.0 << QByteArray("123456789");
    QTest::newRow("fraction") << 0.0001 << QByteArray("0.0001");
    QTest::newRow("bucket bound") << 0.0001 * 1024 << QByteArray("0.1024");
    QTest::newRow("tiny") << 2.5e-9 << QByteArray("2.5e-09");
    QTest::newRow("huge") << 1.5e20 << QByteArray("1.5e+20");
    QTest::newRow("nan") << qQNaN() << QByteArray("NaN");
    QTest::newRow("inf") << qInf() << QByteArray("+Inf");
    QTest::newRow("-inf") << -qInf() << QByteArray("-Inf");
}

void tst_PrometheusWriter::values()
{
    QFETCH(double, value);
    QFETCH(QByteArray, text);
    QCOMPARE(formatValue(value), text);
}

QTEST_APPLESS_MAIN(tst_PrometheusWriter)
#include "tst_prometheuswriter.moc"
