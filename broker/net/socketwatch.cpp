#include "socketwatch.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <QHash>
#include <QPointer>
#include <QSocketNotifier>

#include "netlog.h"

namespace cmq {

namespace {

// One per thread that has watches, made with the first and gone with the last, so nothing of
// it outlives the thread's event loop or the application.
class EpollSet
{
public:
    EpollSet() : m_epoll(::epoll_create1(EPOLL_CLOEXEC)), m_createError(m_epoll < 0 ? errno : 0)
    {
        if (m_epoll >= 0) {
            m_notifier = new QSocketNotifier(m_epoll, QSocketNotifier::Read);
            QObject::connect(m_notifier, &QSocketNotifier::activated, m_notifier,
                             [this] { dispatch(); });
        }
    }
    ~EpollSet()
    {
        delete m_notifier;
        if (m_epoll >= 0)
            ::close(m_epoll);
    }

    quint64 add(SocketWatch *watch)
    {
        const quint64 key = ++m_lastKey;
        m_watches.insert(key, watch);
        return key;
    }
    // Removes a watch; the set goes with its last one, after the dispatch under way if any.
    void remove(quint64 key)
    {
        m_watches.remove(key);
        if (m_watches.isEmpty() && m_dispatching == 0)
            drop();
    }

    // EPOLL_CTL_ADD / MOD / DEL for one descriptor; false with errno set if the kernel refused
    // (or the set could not be made: EBADF).
    bool control(int op, int fd, quint32 events, quint64 key)
    {
        if (m_epoll < 0) {
            errno = m_createError;
            return false;
        }
        epoll_event event{};
        event.events = events;
        event.data.u64 = key;
        return ::epoll_ctl(m_epoll, op, fd, &event) == 0;
    }

    // Descriptors this set refused so far, this one included.
    quint64 countRefusal() { return ++m_refused; }

private:
    // Whatever is ready now, a bounded number per pass so that timers and posted events still
    // run between them; what is left stays ready (level-triggered) for the next pass. A watch
    // may be deleted by an earlier one's handler, so each is looked up when its turn comes. A
    // handler that ran an event loop of its own would dispatch again inside this one: the set
    // is dropped only by the outermost.
    void dispatch()
    {
        epoll_event events[256];
        const int n = ::epoll_wait(m_epoll, events, int(std::size(events)), 0);
        ++m_dispatching;
        for (int i = 0; i < n; ++i) {
            if (SocketWatch *watch = m_watches.value(events[i].data.u64))
                watch->deliver(events[i].events);
        }
        if (--m_dispatching == 0 && m_watches.isEmpty()) {
            // Inside the notifier's own signal: it is deleted once that has returned.
            m_notifier->setEnabled(false);
            m_notifier->deleteLater();
            m_notifier = nullptr;
            drop();
        }
    }

    void drop();

    const int m_epoll;
    const int m_createError; // errno of epoll_create1 when it failed
    QSocketNotifier *m_notifier = nullptr;
    QHash<quint64, SocketWatch *> m_watches;
    quint64 m_lastKey = 0;
    int m_dispatching = 0; // dispatch() calls under way (nested by a handler's own event loop)
    quint64 m_refused = 0;
};

thread_local EpollSet *t_set = nullptr;

void EpollSet::drop()
{
    t_set = nullptr;
    delete this;
}

EpollSet &threadSet()
{
    if (!t_set)
        t_set = new EpollSet;
    return *t_set;
}

} // namespace

SocketWatch::SocketWatch(int descriptor, QObject *parent)
    : QObject(parent), m_fd(descriptor), m_key(threadSet().add(this))
{
    update();
}

SocketWatch::~SocketWatch()
{
    delete m_readNotifier; // before the descriptor closes, as Qt asks
    delete m_writeNotifier;
    EpollSet &set = threadSet();
    if (m_registered)
        set.control(EPOLL_CTL_DEL, m_fd, 0, m_key);
    set.remove(m_key); // last: may delete the set
}

void SocketWatch::setReadEnabled(bool on)
{
    if (m_read != on) {
        m_read = on;
        update();
    }
}

void SocketWatch::setWriteEnabled(bool on)
{
    if (m_write != on) {
        m_write = on;
        update();
    }
}

// A descriptor with nothing enabled leaves the set: epoll reports hang-ups and errors whatever
// it is asked for, and level-triggered that would wake every pass for a watch that must not
// hear of them yet (a reader paused at its buffer limit).
void SocketWatch::update()
{
    if (m_fd < 0)
        return;
    if (m_readNotifier) {
        m_readNotifier->setEnabled(m_read);
        m_writeNotifier->setEnabled(m_write);
        return;
    }
    const quint32 events = (m_read ? quint32(EPOLLIN) : 0u) | (m_write ? quint32(EPOLLOUT) : 0u);
    EpollSet &set = threadSet();
    if (events == 0) {
        if (m_registered)
            set.control(EPOLL_CTL_DEL, m_fd, 0, m_key);
        m_registered = false;
        return;
    }
    if (!set.control(m_registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, m_fd, events, m_key)) {
        const int error = errno;
        if (m_registered)
            set.control(EPOLL_CTL_DEL, m_fd, 0, m_key);
        m_registered = false;
        fallBackToNotifiers(error);
        return;
    }
    m_registered = true;
}

// Without this a watch the set refused would never fire, and its connection would hang
// unserved without a word in the log.
void SocketWatch::fallBackToNotifiers(int error)
{
    // Once per set and then every 1,000th: a flood of connections must not flood the log too.
    const quint64 refused = threadSet().countRefusal();
    if (refused == 1 || refused % 1000 == 0) {
        qCWarning(lcSession,
                  "descriptor %d cannot join the epoll set (%s): watched by a socket notifier of "
                  "its own instead (%llu so far)",
                  m_fd, strerror(error), static_cast<unsigned long long>(refused));
    }
    m_readNotifier = new QSocketNotifier(m_fd, QSocketNotifier::Read, this);
    m_writeNotifier = new QSocketNotifier(m_fd, QSocketNotifier::Write, this);
    connect(m_readNotifier, &QSocketNotifier::activated, this, [this] { deliver(EPOLLIN); });
    connect(m_writeNotifier, &QSocketNotifier::activated, this, [this] { deliver(EPOLLOUT); });
    update();
}

void SocketWatch::deliver(quint32 events)
{
    const bool failed = events & (EPOLLERR | EPOLLHUP);
    QPointer<SocketWatch> alive(this);
    if (m_read && (events & EPOLLIN || failed))
        Q_EMIT readable();
    // The read handler may have closed the stream and deleted this watch.
    if (alive && m_write && (events & EPOLLOUT || failed))
        Q_EMIT writable();
}

} // namespace cmq
