#pragma once
// One queue in detail, opened from the Queues tab: its figures, the bindings that route into
// it, the connections consuming from it, a live chart of its depth, what waits in it and its
// dead letters. Fed by the main window
// from each watch snapshot; it keeps showing the last data when the queue is deleted.

#include <QDialog>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QLabel>

#include "models/queuebindingmodel.h"
#include "models/queueconsumermodel.h"
#include "models/queuedepthhistory.h"
#include "ui/deadletterpanel.h"
#include "ui/queuemessagespanel.h"

QT_BEGIN_NAMESPACE
class QLineSeries;
class QTabWidget;
class QValueAxis;
QT_END_NAMESPACE

namespace cmq::admingui {

class QueueDetailDialog final : public QDialog
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(QueueDetailDialog)

public:
    explicit QueueDetailDialog(const QString &queue, QWidget *parent = nullptr);

    QString queueName() const { return m_queue; }
    // The Messages tab pages through the queue over this session, the Dead letters tab lists
    // and requeues over it.
    void attachSession(AdminSession &session)
    {
        m_messages->attach(session);
        m_deadLetters->attach(session);
    }
    QueueMessagesPanel &messages() { return *m_messages; }
    DeadLetterPanel &deadLetters() { return *m_deadLetters; }
    void showMessagesTab();
    void showDeadLettersTab();
    // `queue`: the queue's row (empty when it no longer exists); `history`: oldest first.
    void showQueue(const QJsonObject &queue, const QJsonArray &bindings,
                   const QJsonArray &connections, const QList<DepthSample> &history);

    const QueueBindingModel &bindings() const { return m_bindings; }
    const QueueConsumerModel &consumers() const { return m_consumers; }
    QString figure(const QString &name) const; // the text of a figure, for tests
    QString stateText() const { return m_state->text(); }
    int depthPointCount() const;
    // A consumer's row was clicked: its connection, for the main window's Connections tab.
    void requestConsumerConnection(int row);

Q_SIGNALS:
    void connectionRequested(quint64 connectionId);

private:
    QWidget *makeFigures();
    QWidget *makeChart();
    void showHistory(const QList<DepthSample> &history);

    QString m_queue;
    QueueBindingModel m_bindings;
    QueueConsumerModel m_consumers;
    QHash<QString, QLabel *> m_figures;
    QLabel *m_state;
    QueueMessagesPanel *m_messages;
    DeadLetterPanel *m_deadLetters;
    QTabWidget *m_tabs = nullptr;
    QLineSeries *m_ready = nullptr;
    QLineSeries *m_unacked = nullptr;
    QValueAxis *m_x = nullptr;
    QValueAxis *m_y = nullptr;
};

} // namespace cmq::admingui
