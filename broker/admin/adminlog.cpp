#include "admin/adminlog.h"

namespace cmq {
Q_LOGGING_CATEGORY(lcAdmin, "ciphermq.admin")
Q_LOGGING_CATEGORY(lcAudit, "ciphermq.audit")
} // namespace cmq
