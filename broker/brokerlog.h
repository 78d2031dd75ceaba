#pragma once
// The broker's own logging category (ciphermq.broker): start-up, listeners coming and going,
// leadership, reloads. Declared once for the files at the top of broker/.

#include <QLoggingCategory>

namespace cmq {
Q_DECLARE_LOGGING_CATEGORY(lcBroker)
} // namespace cmq
