#pragma once
// Shared by the broker's paged-list tests (tst_snapshotpage, tst_talkerpage): a page request,
// and the CPU timer of their printed figures.

#include <algorithm>

#include <time.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QList>

#include "admin/adminrequest.h"

namespace cmq::test {

inline admin::ListPage page(const QString &sort, bool descending, int offset, int limit,
                            const QString &filter = {})
{
    admin::ListPage p;
    p.paged = true;
    p.sort = sort;
    p.descending = descending;
    p.offset = offset;
    p.limit = limit;
    p.filter = filter;
    return p;
}

// CPU time of this thread: the snapshot is built on the broker's event loop thread, and the
// figure does not grow with the machine's load as wall-clock time does.
inline double threadCpuMs()
{
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// The median CPU time of 7 runs of `build`.
template <typename Build> double medianCpuMs(Build &&build)
{
    QList<double> ms;
    for (int i = 0; i < 7; ++i) {
        const double start = threadCpuMs();
        build();
        ms.append(threadCpuMs() - start);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

// Prints the CPU time (median of 7) of a whole list's JSON against a page's, with their sizes:
// `whole()` and `paged()` build the rows.
template <typename Whole, typename Paged>
void printPageCost(const QString &list, const QString &page, Whole &&whole, Paged &&paged)
{
    const auto size = [](const QJsonArray &rows) {
        return QJsonDocument(rows).toJson(QJsonDocument::Compact).size();
    };
    qsizetype wholeBytes = 0, pageBytes = 0;
    const double wholeMs = medianCpuMs([&] { wholeBytes = size(whole()); });
    const double pageMs = medianCpuMs([&] { pageBytes = size(paged()); });
    qInfo("%s, CPU time, median of 7: whole list %.1f ms (%.2f MB of JSON); %s %.1f ms (%.0f kB)",
          qPrintable(list), wholeMs, wholeBytes / 1e6, qPrintable(page), pageMs, pageBytes / 1e3);
}

} // namespace cmq::test
