#include "logging/rotatingfile.h"

#include <algorithm>

#include <QDir>
#include <QFileInfo>

namespace cmq::logging {

RotatingFile::RotatingFile(Options options, Clock clock)
    : m_options(std::move(options)), m_clock(std::move(clock))
{
}

RotatingFile::Period RotatingFile::periodFromConfig(const QString &rotation)
{
    if (rotation == QLatin1String("hourly"))
        return Period::Hourly;
    if (rotation == QLatin1String("daily"))
        return Period::Daily;
    return Period::Never;
}

QString RotatingFile::periodKey(const QDateTime &utc) const
{
    switch (m_options.period) {
    case Period::Hourly:
        return utc.toString(QStringLiteral("yyyy-MM-ddTHH"));
    case Period::Daily:
        return utc.toString(QStringLiteral("yyyy-MM-dd"));
    case Period::Never:
        return QString();
    }
    return QString();
}

Status RotatingFile::open()
{
    const QFileInfo info(m_options.path);
    if (!QDir().mkpath(info.absolutePath()))
        return failure(QStringLiteral("cannot create the directory of %1").arg(m_options.path));
    m_file.setFileName(m_options.path);
    if (!m_file.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Unbuffered))
        return failure(
            QStringLiteral("cannot open %1: %2").arg(m_options.path, m_file.errorString()));
    m_size = m_file.size();
    // Content left from an earlier run belongs to the period it was written in.
    const QDateTime written = m_size > 0 ? info.lastModified().toUTC() : m_clock();
    m_periodKey = periodKey(written);
    return success();
}

void RotatingFile::write(const QByteArray &line)
{
    if (!m_file.isOpen())
        return;
    const QString nowKey = periodKey(m_clock());
    if (m_size > 0 && (nowKey != m_periodKey || m_size + line.size() > m_options.maxBytes))
        rotate();
    m_periodKey = nowKey;
    const qint64 written = m_file.write(line);
    if (written > 0)
        m_size += written;
}

void RotatingFile::rotate()
{
    m_file.close();
    // "never" still rotates by size; those files are named by the time of the rotation.
    const QString stamp = m_periodKey.isEmpty()
                              ? m_clock().toString(QStringLiteral("yyyy-MM-ddTHH-mm-ss"))
                              : m_periodKey;
    QString target = m_options.path + u'.' + stamp;
    for (int n = 1; QFileInfo::exists(target); ++n)
        target = m_options.path + u'.' + stamp + u'.' + QString::number(n);
    QFile::rename(m_options.path, target);
    m_file.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Unbuffered);
    m_size = m_file.size();
    prune();
}

QStringList RotatingFile::rotatedFiles() const
{
    const QFileInfo info(m_options.path);
    const QDir dir = info.absoluteDir();
    QFileInfoList rotated =
        dir.entryInfoList({info.fileName() + QStringLiteral(".*")}, QDir::Files, QDir::NoSort);
    // Oldest first: by modification time, then by name (".1" after the plain stamp).
    std::sort(rotated.begin(), rotated.end(), [](const QFileInfo &a, const QFileInfo &b) {
        if (a.lastModified() != b.lastModified())
            return a.lastModified() < b.lastModified();
        if (a.fileName().size() != b.fileName().size())
            return a.fileName().size() < b.fileName().size();
        return a.fileName() < b.fileName();
    });
    QStringList paths;
    for (const QFileInfo &f : rotated)
        paths.append(f.absoluteFilePath());
    return paths;
}

void RotatingFile::prune()
{
    if (m_options.maxFiles <= 0)
        return;
    const QStringList rotated = rotatedFiles();
    for (qsizetype i = 0; i + m_options.maxFiles < rotated.size(); ++i)
        QFile::remove(rotated[i]);
}

} // namespace cmq::logging
