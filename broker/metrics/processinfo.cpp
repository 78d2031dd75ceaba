#include "metrics/processinfo.h"

#include <QDir>
#include <QFile>

namespace cmq::metrics {

ProcessInfo readProcessInfo()
{
    ProcessInfo info;
    QFile status(QStringLiteral("/proc/self/status"));
    if (status.open(QIODevice::ReadOnly)) {
        // "VmRSS:	   31234 kB" and "Threads:	5"
        const QList<QByteArray> lines = status.readAll().split('\n');
        for (const QByteArray &line : lines) {
            if (line.startsWith("VmRSS:"))
                info.residentBytes = line.mid(6).trimmed().split(' ').value(0).toLongLong() * 1024;
            else if (line.startsWith("Threads:"))
                info.threads = line.mid(8).trimmed().toInt();
        }
    }
    // Minus the descriptor QDir itself holds open while listing.
    const qsizetype fds = QDir(QStringLiteral("/proc/self/fd"))
                              .entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot)
                              .size();
    info.openFds = int(qMax<qsizetype>(0, fds - 1));
    return info;
}

} // namespace cmq::metrics
