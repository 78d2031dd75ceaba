#pragma once
// The core's logging category (ciphermq.router), declared once for every file under
// broker/core.

#include <QLoggingCategory>

namespace cmq {
Q_DECLARE_LOGGING_CATEGORY(lcRouter)
} // namespace cmq
