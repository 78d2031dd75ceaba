#pragma once
// An append-only log file that rotates by time (hourly, daily, never) and by size: the live
// file keeps its configured name (so `tail -F` works), rotated ones get the period they cover
// as a suffix ("info.log.2025-01-31", "info.log.2025-01-31T10", ".1" etc. when one period
// rotates by size more than once), and only the newest `maxFiles` rotated files are kept.

#include <functional>

#include <QDateTime>
#include <QFile>
#include <QString>

#include "util/result.h"

namespace cmq::logging {

class RotatingFile
{
public:
    enum class Period { Never, Hourly, Daily };
    struct Options
    {
        QString path;
        Period period = Period::Daily;
        qint64 maxBytes = 50LL << 20; // rotate before a write would exceed this
        int maxFiles = 14;            // rotated files kept; 0 = keep all
    };
    using Clock = std::function<QDateTime()>; // UTC

    explicit RotatingFile(Options options, Clock clock = &QDateTime::currentDateTimeUtc);

    // Creates the directory and opens (appends to) the file.
    Status open();
    // One complete line (with its "\n"). Rotates first when the period changed or the size
    // would pass the limit.
    void write(const QByteArray &line);

    const QString &path() const { return m_options.path; }
    // The rotated files that exist now, oldest first.
    QStringList rotatedFiles() const;

    static Period periodFromConfig(const QString &rotation);

private:
    QString periodKey(const QDateTime &utc) const;
    void rotate();
    void prune();

    Options m_options;
    Clock m_clock;
    QFile m_file;
    qint64 m_size = 0;
    QString m_periodKey; // the period the live file's content belongs to
};

} // namespace cmq::logging
