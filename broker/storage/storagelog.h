#pragma once
// The storage subsystem's logging category, declared once for every file under broker/storage.

#include <QLoggingCategory>

namespace cmq::storage {
Q_DECLARE_LOGGING_CATEGORY(lcStorage)
} // namespace cmq::storage
