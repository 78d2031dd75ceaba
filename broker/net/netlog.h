#pragma once
// The network subsystem's logging categories, declared once for every file under broker/net:
// the listeners (ciphermq.listener), the sessions (ciphermq.session) and the open-file limit
// (ciphermq.openfiles).

#include <QLoggingCategory>

namespace cmq {
Q_DECLARE_LOGGING_CATEGORY(lcListener)
Q_DECLARE_LOGGING_CATEGORY(lcSession)
Q_DECLARE_LOGGING_CATEGORY(lcOpenFiles)
} // namespace cmq
