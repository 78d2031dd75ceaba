#pragma once
// Console logging for the daemon: one readable line per message with its category, filtered by
// logging.level unless QT_LOGGING_RULES says otherwise.

#include "config/config.h"

namespace cmq {

void setUpLogging(const Config::Logging &logging);

} // namespace cmq
