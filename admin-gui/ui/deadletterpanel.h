#pragma once
// The queue detail's Dead letters tab: the queue's dead-lettered messages as the broker reports
// them (reason, original queue, time, delivery count; never content) and Requeue…, which sends
// the listed ones back to the queues they came from after a confirmation naming the queue and
// the count. Greyed, with the reason, for a read-only identity; the broker refuses anyway.

#include <functional>

#include <QWidget>

#include "models/deadlettermodel.h"

QT_BEGIN_NAMESPACE
class QLabel;
class QPushButton;
class QTableView;
QT_END_NAMESPACE

namespace cmq::admingui {

class AdminSession;

class DeadLetterPanel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DeadLetterPanel)

public:
    // Asked before the requeue; true = go ahead. Tests replace the dialog.
    using Confirm = std::function<bool(const QString &title, const QString &text)>;

    explicit DeadLetterPanel(const QString &queue, QWidget *parent = nullptr);

    void attach(AdminSession &session);
    void setConfirm(Confirm confirm) { m_confirm = std::move(confirm); }
    const DeadLetterModel &model() const { return m_model; }
    QString statusText() const;
    // The last requeue's outcome (empty before one).
    QString resultText() const { return m_result; }
    bool requeueAllowed() const;
    QString requeueToolTip() const;
    // The queue's row from a snapshot: while the tab is shown, a change of its depth lists
    // the dead letters again.
    void followQueue(const QJsonObject &queue);

public Q_SLOTS:
    void reload();
    void requeueListed();

protected:
    void showEvent(QShowEvent *event) override;

private:
    void onDeadLetters(const QString &line, const QJsonArray &deadLetters, const QString &error);
    void onActionFinished(const QString &line, bool ok, const QString &message);
    void followSession();
    void updateControls();

    DeadLetterModel m_model;
    AdminSession *m_session = nullptr;
    Confirm m_confirm;
    QPushButton *m_reload;
    QPushButton *m_requeue;
    QLabel *m_readOnlyNote;
    QLabel *m_status;
    QTableView *m_view;
    QString m_error;
    QString m_result;
    bool m_resultFailed = false;
    QString m_pendingRequeue; // the requeue line awaiting its reply
    QString m_refusal;        // why requeue is greyed (read-only), empty while allowed
    double m_lastDepth = -1;  // ready + unacked when last listed
};

} // namespace cmq::admingui
