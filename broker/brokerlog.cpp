#include "brokerlog.h"

namespace cmq {
Q_LOGGING_CATEGORY(lcBroker, "ciphermq.broker")
} // namespace cmq
