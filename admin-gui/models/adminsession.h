#pragma once
// The console's live link to one broker: connects with the chosen identity, starts the watch
// stream, turns raw socket/TLS/refusal errors into sentences an operator can act on, and
// reconnects after a broker restart. A refusal (not an admin, wrong CA) is not retried:
// retrying cannot fix it and would only fill the broker's log.

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QTimer>

#include "admin/adminclient.h"
#include "models/connectionoptions.h"

namespace cmq::admingui {

class AdminSession final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AdminSession)

public:
    enum class State { Disconnected, Connecting, Connected, Reconnecting, Refused };
    Q_ENUM(State)

    explicit AdminSession(QObject *parent = nullptr);

    // Starts (or restarts) the session; false with errorText() when the files are unusable.
    bool open(const ConnectionOptions &options);
    void close();

    State state() const { return m_state; }
    QString errorText() const { return m_errorText; }
    const ConnectionOptions &options() const { return m_options; }
    admin::AdminClient &client() { return m_client; }
    const QJsonObject &lastSnapshot() const { return m_lastSnapshot; }

    void setWatchIntervalMs(int ms) { m_watchIntervalMs = ms; }
    // The pages of the queue and connection lists the watch asks for (ListPager); a change
    // is sent at once while connected.
    void setPaging(const admin::SnapshotPaging &paging);
    const admin::SnapshotPaging &paging() const { return m_paging; }
    // The list sections the watch asks for (what the shown views need); a change is sent at
    // once while connected, and the broker answers it with a snapshot right away.
    void setSections(admin::Sections sections);
    admin::Sections sections() const { return m_sections; }
    // "watch <interval>", the sections unless all, and the page options.
    QString watchLine() const;
    int watchIntervalMs() const { return m_watchIntervalMs; }
    // A fresh snapshot now (a new `watch` answers with one at once), or, while waiting to
    // reconnect, the next attempt now.
    void refresh();
    void setReconnectDelayMs(int ms) { m_reconnectTimer.setInterval(ms); }
    int reconnectDelayMs() const { return m_reconnectTimer.interval(); }

    // An admin action (purge, delete_queue, disconnect); the reply comes as actionFinished.
    void runAction(const QString &line);
    // `audit <count>`; the entries come as auditReceived.
    void fetchAudit(int count);
    // A `queue_messages ...` line; the page comes as queueMessagesReceived.
    void fetchQueueMessages(const QString &line);
    // A `dead_letters ...` line; the list comes as deadLettersReceived with the same line (the
    // reply names no queue, so the line is how a view knows its own).
    void fetchDeadLetters(const QString &line);
    // What the broker says about this identity (the snapshot's "session"): a read-only
    // operator (admin.readonly_cns) may watch but not act. False until the first snapshot.
    bool isReadOnly() const;

    // What an operator should read for a raw AdminClient error (pure, for tests).
    static QString describeError(const QString &raw, const ConnectionOptions &options);
    // Whether retrying can help (the broker down or restarting) or not (refusal, wrong CA).
    static bool isRetryable(const QString &raw);

Q_SIGNALS:
    void stateChanged(cmq::admingui::AdminSession::State state, const QString &message);
    void snapshotReceived(const QJsonObject &snapshot);
    void actionFinished(const QString &line, bool ok, const QString &message);
    void auditReceived(const QJsonArray &entries);
    // `error` is empty when `page` is the broker's reply.
    void queueMessagesReceived(const QJsonObject &page, const QString &error);
    // `error` is empty when `deadLetters` is the broker's reply to `line`.
    void deadLettersReceived(const QString &line, const QJsonArray &deadLetters,
                             const QString &error);

private:
    void setState(State state, const QString &message);
    void connectNow();
    void onDisconnected();

    admin::AdminClient m_client;
    ConnectionOptions m_options;
    QTimer m_reconnectTimer;
    QJsonObject m_lastSnapshot;
    QHash<quint64, QString> m_pendingActions;
    QHash<quint64, QString> m_pendingDeadLetters;
    QString m_errorText;
    QString m_lastRawError;
    State m_state = State::Disconnected;
    int m_watchIntervalMs = 1000;
    admin::SnapshotPaging m_paging;
    admin::Sections m_sections = admin::AllSections;
    bool m_wanted = false;        // the user wants to be connected
    bool m_attemptActive = false; // a connect attempt has not ended yet
};

} // namespace cmq::admingui
