#pragma once
// What the operating system says about this process: resident memory and open descriptors
// (Linux /proc; zeros elsewhere).

#include <QtGlobal>

namespace cmq::metrics {

struct ProcessInfo
{
    qint64 residentBytes = 0;
    int openFds = 0;
    int threads = 0;
};

ProcessInfo readProcessInfo();

} // namespace cmq::metrics
