#pragma once
// Logging for the daemon: one readable console line per message with its category, filtered by
// logging.level unless QT_LOGGING_RULES says otherwise; and the JSON-lines log files of
// logging.*_file_path with rotation (broker/logging/jsonlogsink.h).

#include "config/config.h"
#include "util/result.h"

namespace cmq {

void setUpLogging(const Config::Logging &logging);
// Opens the three log files and sends every message there too (as well as to the console).
Status setUpLogFiles(const Config::Logging &logging);

} // namespace cmq
