#pragma once
// The broker's log output (seed 11.2): every message that passes the category filter goes to
// the console as a readable line and, as one JSON object per line, to three rotating files:
// the debug file (debug and more severe), the info file (info and more severe) and the error
// file (errors only). Installed once as the Qt message handler; thread-safe (the storage
// worker logs too).

#include <memory>

#include <QByteArray>
#include <QString>

#include "config/config.h"
#include "util/result.h"

class QMessageLogContext;

namespace cmq::logging {

class JsonLogSink
{
public:
    // Opens the three files and installs the handler. Fails (and installs nothing) when a file
    // cannot be created.
    static Status install(const Config::Logging &logging);
    // Restores Qt's default handler and closes the files.
    static void uninstall();

    // One JSON line: {"timestamp":...,"level":...,"target":...,"message":...}\n. Messages that
    // look like key material or message payloads are replaced by a placeholder: the code never
    // logs them, this is the net under that rule.
    static QByteArray formatJson(QtMsgType type, const char *category, const QString &message,
                                 const QDateTime &utc);
    static QString redact(const QString &message);
    static const char *levelName(QtMsgType type);
};

} // namespace cmq::logging
