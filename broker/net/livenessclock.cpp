#include "net/livenessclock.h"

#include <vector>

#include <QCoreApplication>
#include <QPointer>
#include <QThread>

#include "net/session.h"

namespace cmq {

LivenessClock &LivenessClock::forCurrentThread()
{
    thread_local QPointer<LivenessClock> clock;
    if (!clock) {
        clock = new LivenessClock;
        // Sessions live in the application's thread; a clock on another thread (unit tests
        // running sessions elsewhere) is deleted with that thread's event loop.
        if (QCoreApplication *app = QCoreApplication::instance();
            app && app->thread() == QThread::currentThread())
            clock->setParent(app);
        else
            QObject::connect(QThread::currentThread(), &QThread::finished, clock,
                             &QObject::deleteLater);
    }
    return *clock;
}

LivenessClock::LivenessClock()
{
    m_timer.setInterval(kTickMs);
    connect(&m_timer, &QTimer::timeout, this, &LivenessClock::tick);
}

void LivenessClock::add(Session *session)
{
    m_sessions.insert(session);
    if (!m_timer.isActive())
        m_timer.start();
}

void LivenessClock::remove(Session *session)
{
    m_sessions.erase(session);
    if (m_sessions.empty())
        m_timer.stop();
}

void LivenessClock::tick()
{
    // A tick may close sessions (and so remove them): walk a copy, skipping those gone since.
    const std::vector<Session *> sessions(m_sessions.begin(), m_sessions.end());
    for (Session *session : sessions) {
        if (m_sessions.count(session))
            session->onLivenessTick();
    }
}

} // namespace cmq
