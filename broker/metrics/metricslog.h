#pragma once
// The metrics subsystem's logging category (ciphermq.metrics), declared once for every file
// under broker/metrics.

#include <QLoggingCategory>

namespace cmq::metrics {
Q_DECLARE_LOGGING_CATEGORY(lcMetricsHttp)
} // namespace cmq::metrics
