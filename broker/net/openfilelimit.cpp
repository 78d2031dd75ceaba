#include "net/openfilelimit.h"

#include <cerrno>
#include <cstring>

#include <sys/resource.h>

#include <QFile>

#include "net/netlog.h"

namespace cmq {

// Descriptors the broker needs besides client connections: listeners, the database
// connections, log files, admin and metrics sessions, certificate reloads.
constexpr quint64 kOwnDescriptors = 256;

// The kernel refuses a limit above fs.nr_open, and RLIM_INFINITY is above it.
static rlim_t kernelCeiling()
{
    QFile file(QStringLiteral("/proc/sys/fs/nr_open"));
    bool ok = false;
    rlim_t value = 0;
    if (file.open(QIODevice::ReadOnly))
        value = rlim_t(file.readAll().trimmed().toULongLong(&ok));
    return ok && value > 0 ? value : rlim_t(1) << 20; // the kernel's default nr_open
}

OpenFileLimit raiseOpenFileLimit()
{
    OpenFileLimit result;
    rlimit limit = {};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
        result.error = QString::fromLocal8Bit(std::strerror(errno));
        return result;
    }
    result.before = result.after = quint64(limit.rlim_cur);
    rlim_t target = limit.rlim_max;
    if (target == RLIM_INFINITY)
        target = kernelCeiling();
    if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur >= target)
        return result;
    limit.rlim_cur = target;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
        result.error = QString::fromLocal8Bit(std::strerror(errno));
        return result;
    }
    result.after = quint64(target);
    return result;
}

OpenFileLimit raiseOpenFileLimitFor(int maxConnections)
{
    const OpenFileLimit limit = raiseOpenFileLimit();
    if (!limit.error.isEmpty())
        qCWarning(lcOpenFiles, "cannot raise the open-file limit (%llu): %s",
                  static_cast<unsigned long long>(limit.before), qPrintable(limit.error));
    else if (limit.after != limit.before)
        qCInfo(lcOpenFiles, "open-file limit raised from %llu to %llu",
               static_cast<unsigned long long>(limit.before),
               static_cast<unsigned long long>(limit.after));
    const quint64 needed = quint64(qMax(maxConnections, 0)) + kOwnDescriptors;
    if (limit.after < needed)
        qCWarning(lcOpenFiles,
                  "the open-file limit (%llu) is below server.max_connections (%d) plus %llu "
                  "for the broker itself: raise LimitNOFILE (or ulimit -n) to at least %llu",
                  static_cast<unsigned long long>(limit.after), maxConnections,
                  static_cast<unsigned long long>(kOwnDescriptors),
                  static_cast<unsigned long long>(needed));
    return limit;
}

} // namespace cmq
