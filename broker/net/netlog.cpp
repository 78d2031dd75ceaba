#include "net/netlog.h"

namespace cmq {
Q_LOGGING_CATEGORY(lcListener, "ciphermq.listener")
Q_LOGGING_CATEGORY(lcSession, "ciphermq.session")
Q_LOGGING_CATEGORY(lcOpenFiles, "ciphermq.openfiles")
} // namespace cmq
