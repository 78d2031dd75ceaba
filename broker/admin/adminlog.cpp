#include "admin/adminlog.h"

namespace cmq {
Q_LOGGING_CATEGORY(lcAdmin, "ciphermq.admin")
} // namespace cmq
