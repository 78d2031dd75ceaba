#pragma once
// One admin action on several targets (purge, delete_queue, disconnect on the selected rows):
// the confirmation text listing every target with its message count, then the requests one
// after another (so progress means something and the broker is not flooded), then a summary
// of what happened to each. No widgets: the window shows the texts and the progress.

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

namespace cmq::admingui {

class AdminSession;

class BulkAction final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(BulkAction)

public:
    struct Target
    {
        QString label;       // the queue name, or "12 (svc_a from 127.0.0.1)"
        QString line;        // the admin request, "purge receiver_1_a"
        qint64 messages = 0; // what the action drops (purge: ready; delete: ready + unacked)
    };
    struct Outcome
    {
        QString label;
        bool ok = false;
        QString message; // the error, or the reply's JSON
    };

    // `verb` names the action in the texts: "Purge", "Delete", "Disconnect".
    BulkAction(AdminSession &session, QString verb, QList<Target> targets,
               QObject *parent = nullptr);

    // What the confirmation asks (pure, for tests): every target (up to `listed`, then how
    // many more) with its messages, and the total.
    static QString confirmationText(const QString &verb, const QList<Target> &targets,
                                    const QString &consequence, int listed = 20);
    // The result line (pure, for tests): how many succeeded, messages dropped, each failure.
    static QString summaryText(const QString &verb, const QList<Outcome> &outcomes);

    void start();
    bool isRunning() const { return m_next > 0 && !m_done; }
    const QList<Outcome> &outcomes() const { return m_outcomes; }
    int total() const { return int(m_targets.size()); }

Q_SIGNALS:
    void progress(int done, int total, const QString &current);
    void finished(const QString &summary, bool allOk);

private:
    void sendNext();
    void onActionFinished(const QString &line, bool ok, const QString &message);

    AdminSession &m_session;
    QString m_verb;
    QList<Target> m_targets;
    QList<Outcome> m_outcomes;
    qsizetype m_next = 0;
    bool m_done = false;
};

} // namespace cmq::admingui
