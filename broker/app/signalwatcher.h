#pragma once
// Turns SIGTERM/SIGINT and SIGHUP into Qt signals, delivered on the event loop (the classic
// self-pipe: a signal handler may only write to a file descriptor).

#include <QObject>

class QSocketNotifier;

namespace cmq {

class SignalWatcher final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SignalWatcher)

public:
    explicit SignalWatcher(QObject *parent = nullptr);
    ~SignalWatcher() override;

Q_SIGNALS:
    void terminateRequested(int signal); // SIGTERM or SIGINT
    void reloadRequested();              // SIGHUP

private:
    void onReadable();
    QSocketNotifier *m_notifier = nullptr;
};

} // namespace cmq
