#include "client/fileoutbox.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>

#include "client/clientlog.h"

namespace cmq::client {

namespace {

const QLatin1StringView EntrySuffix(".msg");
const QLatin1StringView TempSuffix(".tmp");

QString systemError()
{
    return QString::fromLocal8Bit(strerror(errno));
}

// Writes all of `data` to fd, retrying short writes and EINTR.
bool writeAll(int fd, const QByteArray &data)
{
    const char *at = data.constData();
    qsizetype left = data.size();
    while (left > 0) {
        const ssize_t written = ::write(fd, at, size_t(left));
        if (written < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        at += written;
        left -= written;
    }
    return true;
}

} // namespace

Result<std::unique_ptr<FileOutbox>> FileOutbox::open(const QString &directory)
{
    using R = Result<std::unique_ptr<FileOutbox>>;
    const QString path = QDir(directory).absolutePath();
    if (!QDir().mkpath(path))
        return R::failure(QStringLiteral("cannot create the outbox directory %1").arg(path));
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);

    auto lock = std::make_unique<QLockFile>(QDir(path).filePath(QStringLiteral("outbox.lock")));
    // A lock left by a killed process is recognised by its dead PID and taken over at once.
    if (!lock->tryLock(0)) {
        qint64 pid = 0;
        QString host;
        QString app;
        lock->getLockInfo(&pid, &host, &app);
        return R::failure(QStringLiteral("the outbox %1 is in use by process %2 (%3)")
                              .arg(path)
                              .arg(pid)
                              .arg(app));
    }

    const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return R::failure(
            QStringLiteral("cannot open the outbox directory %1: %2").arg(path, systemError()));

    const QDir dir(path);
    for (const QString &name : dir.entryList({u'*' + TempSuffix}, QDir::Files))
        QFile::remove(dir.filePath(name));

    return std::unique_ptr<FileOutbox>(new FileOutbox(path, std::move(lock), fd));
}

FileOutbox::FileOutbox(QString directory, std::unique_ptr<QLockFile> lock, int directoryFd)
    : m_directory(std::move(directory)), m_lock(std::move(lock)), m_directoryFd(directoryFd)
{
}

FileOutbox::~FileOutbox()
{
    if (m_directoryFd >= 0)
        ::close(m_directoryFd);
}

QString FileOutbox::pathFor(const QString &messageId) const
{
    // Ids may hold characters that are not safe in file names, and may be longer than a name:
    // the file is named by the id's hash, the id itself is inside.
    const QByteArray hash =
        QCryptographicHash::hash(messageId.toUtf8(), QCryptographicHash::Sha256).toHex();
    return m_directory + u'/' + QString::fromLatin1(hash) + EntrySuffix;
}

Status FileOutbox::save(const OutboxEntry &entry)
{
    const QString finalPath = pathFor(entry.messageId);
    const QString tempPath = finalPath + TempSuffix;
    const QByteArray tempName = QFile::encodeName(tempPath);
    const int fd = ::open(tempName.constData(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return failure(QStringLiteral("cannot write %1: %2").arg(tempPath, systemError()));
    const bool written = writeAll(fd, entry.toJson()) && ::fsync(fd) == 0;
    const QString writeError = systemError();
    ::close(fd);
    if (!written) {
        ::unlink(tempName.constData());
        return failure(QStringLiteral("cannot write %1: %2").arg(tempPath, writeError));
    }
    if (::rename(tempName.constData(), QFile::encodeName(finalPath).constData()) != 0) {
        const QString renameError = systemError();
        ::unlink(tempName.constData());
        return failure(QStringLiteral("cannot rename %1: %2").arg(tempPath, renameError));
    }
    // The rename itself must reach the disk too, or a crash could forget the file.
    if (::fsync(m_directoryFd) != 0)
        return failure(QStringLiteral("cannot sync %1: %2").arg(m_directory, systemError()));
    return success();
}

Result<QList<OutboxEntry>> FileOutbox::readAll()
{
    QList<OutboxEntry> entries;
    const QDir dir(m_directory);
    for (const QString &name : dir.entryList({u'*' + EntrySuffix}, QDir::Files)) {
        const QString path = dir.filePath(name);
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return Result<QList<OutboxEntry>>::failure(
                QStringLiteral("cannot read %1: %2").arg(path, file.errorString()));
        auto entry = OutboxEntry::fromJson(file.readAll());
        file.close();
        if (!entry) {
            qCWarning(lcClient, "outbox: skipping %s: %s", qPrintable(path),
                      qPrintable(entry.error()));
            QFile::rename(path, path + QStringLiteral(".corrupt"));
            continue;
        }
        entries.append(std::move(entry).value());
    }
    std::sort(entries.begin(), entries.end(),
              [](const OutboxEntry &a, const OutboxEntry &b) { return a.sequence < b.sequence; });
    return entries;
}

Status FileOutbox::remove(const QString &messageId)
{
    const QByteArray path = QFile::encodeName(pathFor(messageId));
    // No directory sync: if a crash brings the file back, the message is resent and the broker
    // answers that it already has it, which confirms it again.
    if (::unlink(path.constData()) != 0 && errno != ENOENT)
        return failure(QStringLiteral("cannot remove %1: %2")
                           .arg(QString::fromLocal8Bit(path), systemError()));
    return success();
}

} // namespace cmq::client
