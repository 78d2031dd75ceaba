#pragma once
// One once-a-second tick for the liveness rules of every session on a thread (heartbeat pings,
// the idle timeout), instead of a timer per connection: with 10,000 connections, 10,000 timers
// re-armed every second cost the event loop more than the traffic did, since each re-arm
// sorts the timer into the thread's timer list.

#include <unordered_set>

#include <QObject>
#include <QTimer>

namespace cmq {

class Session;

class LivenessClock final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(LivenessClock)

public:
    static constexpr int kTickMs = 1000;

    // The clock of the calling thread, created on first use as a child of the application
    // object (so it goes before the event dispatcher does).
    static LivenessClock &forCurrentThread();

    void add(Session *session);
    void remove(Session *session);
    qsizetype size() const { return qsizetype(m_sessions.size()); }

private:
    LivenessClock();
    void tick();

    QTimer m_timer;
    std::unordered_set<Session *> m_sessions;
};

} // namespace cmq
