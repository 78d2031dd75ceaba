#pragma once
// The admin subsystem's logging category (ciphermq.admin), declared once for every file under
// broker/admin.

#include <QLoggingCategory>

namespace cmq {
Q_DECLARE_LOGGING_CATEGORY(lcAdmin)
} // namespace cmq
