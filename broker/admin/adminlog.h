#pragma once
// The admin subsystem's logging categories, declared once for every file under broker/admin:
// the admin listener and its sessions (ciphermq.admin) and the audit trail of admin actions
// (ciphermq.audit).

#include <QLoggingCategory>

namespace cmq {
Q_DECLARE_LOGGING_CATEGORY(lcAdmin)
Q_DECLARE_LOGGING_CATEGORY(lcAudit)
} // namespace cmq
