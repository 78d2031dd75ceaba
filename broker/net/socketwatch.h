#pragma once
// A socket's readiness from one epoll set per thread instead of a QSocketNotifier each.
//
// Qt's event dispatcher hands every enabled notifier to one ppoll() per pass of the event
// loop, so with 10,000 idle connections each pass walked 10,000 descriptors: half of the
// broker's CPU, and the traffic on the other connections fell to two fifths
// (bench/README.md, "Idle connections"). A SocketWatch registers its descriptor in its
// thread's epoll set, and only that set's descriptor is polled by Qt: a pass costs what is
// ready, not what is open. The semantics are QSocketNotifier's: level-triggered, readable()
// on data, end of stream or error, writable() on room, error or hang-up, each only while
// enabled. Should the kernel refuse the set (no descriptor left to make it, no room for one
// more watch), the watch falls back to QSocketNotifiers of its own, with a warning: slower with
// many connections, but the connection is still served.

#include <QObject>

class QSocketNotifier;

namespace cmq {

class SocketWatch final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SocketWatch)

public:
    // Watches `descriptor` (not owned) for reading; writing starts disabled.
    explicit SocketWatch(int descriptor, QObject *parent = nullptr);
    // Leaves the epoll set. Destroy it before closing the descriptor.
    ~SocketWatch() override;

    void setReadEnabled(bool on);
    void setWriteEnabled(bool on);
    bool isReadEnabled() const { return m_read; }
    bool isWriteEnabled() const { return m_write; }

    // For the thread's epoll set: what the descriptor reported (EPOLL* bits).
    void deliver(quint32 events);

Q_SIGNALS:
    void readable();
    void writable();

private:
    void update();
    void fallBackToNotifiers(int error);

    const int m_fd;
    const quint64 m_key; // this watch in its thread's set, never reused
    bool m_read = true;
    bool m_write = false;
    bool m_registered = false;
    // Only when the epoll set refused this descriptor (fallBackToNotifiers).
    QSocketNotifier *m_readNotifier = nullptr;
    QSocketNotifier *m_writeNotifier = nullptr;
};

} // namespace cmq
