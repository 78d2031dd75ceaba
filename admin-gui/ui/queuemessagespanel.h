#pragma once
// The queue detail's Messages tab: what waits in the queue, as metadata the broker keeps
// (sender CN, routing key, size, age, delivery state), never content: the broker cannot read
// it and the console does not pretend to. Paged by the broker; filter by sender or key.

#include <QWidget>

#include "models/queuemessagemodel.h"

QT_BEGIN_NAMESPACE
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;
QT_END_NAMESPACE

namespace cmq::admingui {

class AdminSession;

class QueueMessagesPanel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(QueueMessagesPanel)

public:
    QueueMessagesPanel(const QString &queue, QWidget *parent = nullptr);

    // Where pages come from; the first page is asked for at once.
    void attach(AdminSession &session);
    const QueueMessageModel &model() const { return m_model; }
    QString statusText() const;

public Q_SLOTS:
    void showFirstPage();
    void showNextPage();
    void showPreviousPage();
    void reload();
    void setFilter(const QString &filter);

private:
    void send(const QString &line);
    void onPage(const QJsonObject &page, const QString &error);
    void updateControls();

    QueueMessageModel m_model;
    AdminSession *m_session = nullptr;
    QLineEdit *m_filter;
    QPushButton *m_first;
    QPushButton *m_previous;
    QPushButton *m_next;
    QPushButton *m_reload;
    QLabel *m_status;
    QTableView *m_view;
    QString m_error;
};

} // namespace cmq::admingui
