#include "core/corelog.h"

namespace cmq {
Q_LOGGING_CATEGORY(lcRouter, "ciphermq.router")
} // namespace cmq
