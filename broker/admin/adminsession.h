#pragma once
// One connection on the admin listener: frames request lines, runs them one at a time (a
// purge waits for its commit before the next request is looked at, so replies keep request
// order), and runs the connection's `watch` timer. What a command does is AdminCommands'
// business; the session only carries lines.

#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include "admin/adminrequest.h"
#include "net/clientidentity.h"

class QSslSocket;

namespace cmq {

struct AdminCounters
{
    quint64 requestsIn = 0;
    quint64 bytesIn = 0;
    quint64 bytesOut = 0;
};

class AdminSession final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AdminSession)

public:
    // Above this much unsent output, snapshots are skipped and requests wait.
    static constexpr qint64 OutputLimitBytes = 1 << 20;

    AdminSession(QSslSocket *socket, ClientIdentity identity, QObject *parent = nullptr);
    ~AdminSession() override;

    const ClientIdentity &identity() const { return m_identity; }
    const AdminCounters &counters() const { return m_counters; }
    qint64 unsentBytes() const;
    int watchIntervalMs() const { return m_watchTimer.isActive() ? m_watchTimer.interval() : 0; }
    admin::Sections watchSections() const { return m_watchSections; }
    const admin::SnapshotPaging &watchPaging() const { return m_watchPaging; }

    // Completes the request in progress; the next buffered one is looked at after it.
    void sendReply(const QByteArray &lines);
    // Starts (or changes) the watch stream; the first snapshot is due right away.
    void startWatch(int intervalMs, admin::Sections sections,
                    const admin::SnapshotPaging &paging = {});
    void stopWatch();
    // Writes one "Snapshot: <json>" line.
    void sendSnapshot(const QByteArray &json);
    // Every due snapshot takes a number, sent or skipped, so gaps show what was skipped.
    quint64 nextSnapshotSequence() { return ++m_sequence; }
    // False while the client leaves more than OutputLimitBytes unread: skip its snapshots.
    bool isKeepingUp() const { return unsentBytes() < OutputLimitBytes; }

    // "Notice: <text>", then the close; after the reply in progress, if there is one.
    void closeWithNotice(const QByteArray &text);

Q_SIGNALS:
    void requestReceived(AdminSession *session, const cmq::admin::AdminRequest &request);
    void watchDue(AdminSession *session);
    void closed(AdminSession *session);

private:
    void onReadyRead();
    void processBuffer();
    void write(const QByteArray &bytes);
    void finish();

    QSslSocket *m_socket;
    ClientIdentity m_identity;
    QByteArray m_buffer;
    bool m_busy = false;        // a request is executing; lines wait in m_buffer
    QByteArray m_pendingNotice; // a close asked for while busy
    bool m_closing = false;
    bool m_finished = false;
    QTimer m_watchTimer;
    admin::Sections m_watchSections = admin::AllSections;
    admin::SnapshotPaging m_watchPaging;
    quint64 m_sequence = 0;
    AdminCounters m_counters;
};

} // namespace cmq
