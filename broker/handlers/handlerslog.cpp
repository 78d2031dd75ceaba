#include "handlers/handlerslog.h"

namespace cmq {
Q_LOGGING_CATEGORY(lcAcl, "ciphermq.acl")
Q_LOGGING_CATEGORY(lcRateLimit, "ciphermq.ratelimit")
} // namespace cmq
