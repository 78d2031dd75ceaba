#pragma once
// The handlers' logging categories, declared once for every file under broker/handlers: ACL
// refusals (ciphermq.acl) and rate limiting (ciphermq.ratelimit).

#include <QLoggingCategory>

namespace cmq {
Q_DECLARE_LOGGING_CATEGORY(lcAcl)
Q_DECLARE_LOGGING_CATEGORY(lcRateLimit)
} // namespace cmq
