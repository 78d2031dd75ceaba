#include "metrics/metricslog.h"

namespace cmq::metrics {
Q_LOGGING_CATEGORY(lcMetricsHttp, "ciphermq.metrics")
} // namespace cmq::metrics
