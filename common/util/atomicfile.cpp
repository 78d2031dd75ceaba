#include "util/atomicfile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QFile>

namespace cmq {
namespace {

QString errnoText(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

// write(2) until everything is out; false with errno set on failure.
bool writeAll(int fd, QByteArrayView content)
{
    const char *data = content.data();
    qsizetype left = content.size();
    while (left > 0) {
        const ssize_t written = ::write(fd, data, size_t(left));
        if (written < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        data += written;
        left -= written;
    }
    return true;
}

} // namespace

Status writeFileAtomically(const QString &path, QByteArrayView content, mode_t mode,
                           ExistingFile existing)
{
    const QByteArray target = QFile::encodeName(path);
    QByteArray temporary = target + ".tmp-XXXXXX";
    // mkstemp creates the file with mode 0600 whatever the umask, so a secret is never exposed
    // between creation and the fchmod below.
    const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
    if (fd < 0)
        return failure(QStringLiteral("cannot create %1: %2").arg(path, errnoText(errno)));

    auto fail = [&](const QString &what, int error) {
        ::close(fd);
        ::unlink(temporary.constData());
        return failure(QStringLiteral("cannot %1 %2: %3").arg(what, path, errnoText(error)));
    };
    if (::fchmod(fd, mode) != 0)
        return fail(QStringLiteral("set the mode of"), errno);
    if (!writeAll(fd, content))
        return fail(QStringLiteral("write"), errno);
    if (::fsync(fd) != 0)
        return fail(QStringLiteral("write"), errno);
    if (::close(fd) != 0) {
        const int error = errno;
        ::unlink(temporary.constData());
        return failure(QStringLiteral("cannot write %1: %2").arg(path, errnoText(error)));
    }

    if (existing == ExistingFile::Replace) {
        if (::rename(temporary.constData(), target.constData()) != 0) {
            const int error = errno;
            ::unlink(temporary.constData());
            return failure(QStringLiteral("cannot write %1: %2").arg(path, errnoText(error)));
        }
        return success();
    }
    // link(2) fails with EEXIST instead of replacing: no window between a check and the write.
    const int linked = ::link(temporary.constData(), target.constData());
    const int error = errno;
    ::unlink(temporary.constData());
    if (linked != 0) {
        if (error == EEXIST)
            return failure(QStringLiteral("%1 already exists").arg(path));
        return failure(QStringLiteral("cannot write %1: %2").arg(path, errnoText(error)));
    }
    return success();
}

} // namespace cmq
