#pragma once
// Parses the watch stream's `Snapshot:` lines on a worker thread: a large broker's snapshot is
// megabytes of JSON (2.5 MB, about 17 ms at 5,000 queues), too long to block a GUI thread on.
// Results come back, in order, on the thread that owns the parser. Each snapshot is the whole
// state, so when the worker falls behind it skips to the newest line instead of queueing up.

#include <atomic>

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QThread>

namespace cmq::admin {

class SnapshotParser final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SnapshotParser)

public:
    explicit SnapshotParser(QObject *parent = nullptr);
    ~SnapshotParser() override;

    // Hands one snapshot's JSON to the worker; parsed() follows unless discardPending() or a
    // newer line overtakes it.
    void parse(QByteArray json);
    // Lines handed in so far are dropped (the connection they came from has ended).
    void discardPending();
    const QThread *workerThread() const { return &m_thread; }

Q_SIGNALS:
    void parsed(const QJsonObject &snapshot);

private:
    QThread m_thread;
    QObject *m_worker; // lives in m_thread; parse jobs run in its context
    std::atomic<quint64> m_latestTicket{0};
    quint64 m_generation = 0; // owner thread only
};

} // namespace cmq::admin
