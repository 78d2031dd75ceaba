#include "app/sdnotify.h"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace cmq {

Status sdNotify(const QByteArray &state)
{
    const QByteArray path = qgetenv("NOTIFY_SOCKET");
    if (path.isEmpty())
        return success();
    // systemd hands out an absolute path or an abstract socket name written with a leading
    // "@"; anything else (e.g. "vsock:" for VMs) is not for a broker on a host.
    if (path.front() != '/' && path.front() != '@')
        return failure(QStringLiteral("NOTIFY_SOCKET=%1 is not a unix socket address")
                           .arg(QString::fromLocal8Bit(path)));

    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    if (size_t(path.size()) >= sizeof address.sun_path)
        return failure(QStringLiteral("NOTIFY_SOCKET is too long for a unix socket address"));
    std::memcpy(address.sun_path, path.constData(), size_t(path.size()));
    socklen_t length = socklen_t(offsetof(sockaddr_un, sun_path) + size_t(path.size()));
    if (path.front() == '@')
        address.sun_path[0] = '\0'; // abstract namespace: no terminating NUL counted
    else
        length += 1;

    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return failure(QStringLiteral("cannot create a socket for sd_notify: %1")
                           .arg(QString::fromLocal8Bit(std::strerror(errno))));
    ssize_t sent;
    do {
        sent = ::sendto(fd, state.constData(), size_t(state.size()), MSG_NOSIGNAL,
                        reinterpret_cast<const sockaddr *>(&address), length);
    } while (sent < 0 && errno == EINTR);
    const int error = errno;
    ::close(fd);
    if (sent != state.size())
        return failure(
            QStringLiteral("cannot notify systemd through %1: %2")
                .arg(QString::fromLocal8Bit(path), QString::fromLocal8Bit(std::strerror(error))));
    return success();
}

Status sdNotifyReady(const QString &status)
{
    // STATUS is one line; a newline would start a new (bogus) assignment.
    QByteArray text = status.toUtf8();
    text.replace('\n', ' ');
    return sdNotify("READY=1\nSTATUS=" + text);
}

Status sdNotifyStopping()
{
    return sdNotify("STOPPING=1\nSTATUS=Shutting down");
}

Status sdNotifyReloading()
{
    // systemd >= 253 wants the CLOCK_MONOTONIC time of the reload with RELOADING=1 and older
    // versions ignore it.
    timespec now = {};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    const qint64 usec = qint64(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
    return sdNotify("RELOADING=1\nSTATUS=Reloading\nMONOTONIC_USEC=" + QByteArray::number(usec));
}

} // namespace cmq
