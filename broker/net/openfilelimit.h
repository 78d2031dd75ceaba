#pragma once
// The process's open-file limit (RLIMIT_NOFILE). Every client connection is a descriptor, and
// a service may be started with a low soft limit (1024 is common) under a much higher hard
// one: the broker raises its soft limit to the hard limit at start-up, the usual practice for
// servers, so that server.max_connections is not cut short by accept() failing with EMFILE.

#include <QString>

namespace cmq {

struct OpenFileLimit
{
    quint64 before = 0; // soft limit found at start-up
    quint64 after = 0;  // soft limit now
    QString error;      // why it could not be raised (empty when it could, or needed not)
};

// Raises the soft limit to the hard limit (to fs.nr_open when the hard limit is unlimited).
OpenFileLimit raiseOpenFileLimit();

// raiseOpenFileLimit(), logged; warns when the limit leaves no room for `maxConnections`
// client connections plus the broker's own descriptors (listeners, database, logs, admin).
OpenFileLimit raiseOpenFileLimitFor(int maxConnections);

} // namespace cmq
