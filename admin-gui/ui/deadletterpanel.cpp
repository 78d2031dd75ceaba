#include "ui/deadletterpanel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonObject>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include "models/adminsession.h"
#include "models/palettecolors.h"
#include "ui/listtable.h"

namespace cmq::admingui {

DeadLetterPanel::DeadLetterPanel(const QString &queue, QWidget *parent)
    : QWidget(parent), m_reload(new QPushButton(tr("Reload"))),
      m_requeue(new QPushButton(tr("Requeue…"))), m_readOnlyNote(new QLabel), m_status(new QLabel),
      m_view(makeListTable(&m_model))
{
    m_model.setQueue(queue);
    // Message ids are long (a UUID between the sender's and the receiver's CN): sized to their
    // contents they pushed sender, routing key and size out of a 1280-pixel window. At most
    // 250 px, elided in the middle, where the two CNs at the ends stay readable.
    m_view->setWordWrap(false); // one line per row, as in the main window's tables
    m_view->setTextElideMode(Qt::ElideMiddle);
    m_view->horizontalHeader()->setMaximumSectionSize(250);
    m_confirm = [this](const QString &title, const QString &text) {
        return QMessageBox::question(this, title, text, QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    m_requeue->setObjectName(QStringLiteral("requeueButton"));
    m_status->setWordWrap(true);
    m_readOnlyNote->setEnabled(false);
    m_readOnlyNote->setVisible(false);

    connect(m_reload, &QPushButton::clicked, this, &DeadLetterPanel::reload);
    connect(m_requeue, &QPushButton::clicked, this, &DeadLetterPanel::requeueListed);

    auto *note = new QLabel(tr("In delivery order. Metadata only: the envelope is never shown."));
    note->setEnabled(false);
    auto *controls = new QHBoxLayout;
    controls->addWidget(note, 1);
    controls->addWidget(m_readOnlyNote);
    controls->addWidget(m_reload);
    controls->addWidget(m_requeue);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_status);
    updateControls();
}

void DeadLetterPanel::attach(AdminSession &session)
{
    if (m_session == &session)
        return;
    m_session = &session;
    connect(&session, &AdminSession::deadLettersReceived, this, &DeadLetterPanel::onDeadLetters);
    connect(&session, &AdminSession::actionFinished, this, &DeadLetterPanel::onActionFinished);
    connect(&session, &AdminSession::snapshotReceived, this, &DeadLetterPanel::followSession);
    connect(&session, &AdminSession::stateChanged, this, [this](AdminSession::State state) {
        if (state == AdminSession::State::Connected)
            reload();
    });
    followSession();
    if (session.state() == AdminSession::State::Connected)
        reload();
}

QString DeadLetterPanel::statusText() const
{
    return m_status->text();
}

bool DeadLetterPanel::requeueAllowed() const
{
    return m_requeue->isEnabled();
}

QString DeadLetterPanel::requeueToolTip() const
{
    return m_requeue->toolTip();
}

void DeadLetterPanel::followQueue(const QJsonObject &queue)
{
    const double depth = queue.value(u"ready").toDouble() + queue.value(u"unacked").toDouble();
    if (depth == m_lastDepth || !isVisible())
        return;
    reload();
}

void DeadLetterPanel::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    reload(); // what an operator opening the tab sees is the broker's list now
}

void DeadLetterPanel::reload()
{
    if (!m_session || m_session->state() != AdminSession::State::Connected)
        return;
    const QJsonObject queue = [&] {
        for (const QJsonValue &value : m_session->lastSnapshot().value(u"queues").toArray()) {
            if (value.toObject().value(u"name").toString() == m_model.queue())
                return value.toObject();
        }
        return QJsonObject();
    }();
    m_lastDepth = queue.value(u"ready").toDouble() + queue.value(u"unacked").toDouble();
    m_session->fetchDeadLetters(m_model.request());
}

void DeadLetterPanel::requeueListed()
{
    const QString line = m_model.requeueRequest();
    if (!m_session || line.isEmpty() || !m_pendingRequeue.isEmpty())
        return;
    if (!m_confirm(tr("Requeue dead letters"), m_model.requeueConfirmation()))
        return;
    m_pendingRequeue = line;
    m_session->runAction(line);
    updateControls();
}

void DeadLetterPanel::onDeadLetters(const QString &line, const QJsonArray &deadLetters,
                                    const QString &error)
{
    if (line != m_model.request())
        return; // another queue's list
    if (!error.isEmpty())
        m_error = error;
    else if (m_model.applyReply(line, deadLetters))
        m_error.clear();
    // The columns follow the list just loaded: the header does not always re-measure rows
    // that arrive while the tab is being shown (the headers' widths alone were kept).
    m_view->horizontalHeader()->resizeSections(QHeaderView::ResizeToContents);
    updateControls();
}

void DeadLetterPanel::onActionFinished(const QString &line, bool ok, const QString &message)
{
    if (line != m_pendingRequeue)
        return;
    m_pendingRequeue.clear();
    m_result = DeadLetterModel::requeueResult(ok, message);
    m_resultFailed = !ok;
    reload();
    updateControls();
}

void DeadLetterPanel::followSession()
{
    if (!m_session)
        return;
    const QJsonObject session = m_session->lastSnapshot().value(u"session").toObject();
    const QString refusal =
        session.value(u"read_only").toBool()
            ? tr("Read-only: the broker lists %1 in admin.readonly_cns, so it may list dead "
                 "letters but not requeue them.")
                  .arg(session.value(u"cn").toString())
            : QString();
    if (refusal == m_refusal)
        return;
    m_refusal = refusal;
    updateControls();
}

void DeadLetterPanel::updateControls()
{
    const bool allowed = m_refusal.isEmpty();
    m_requeue->setEnabled(allowed && m_model.rowCount() > 0 && m_pendingRequeue.isEmpty());
    m_requeue->setToolTip(allowed ? tr("Send the listed dead letters back to their original "
                                       "queues")
                                  : m_refusal);
    m_readOnlyNote->setVisible(!allowed);
    m_readOnlyNote->setText(tr("Read-only identity"));
    m_readOnlyNote->setToolTip(m_refusal);

    QStringList lines;
    if (!m_error.isEmpty()) {
        lines << m_error;
    } else if (!m_model.isLoaded()) {
        lines << tr("Loading…");
    } else if (m_model.rowCount() == 0) {
        lines << tr("No dead letters in this queue.");
    } else {
        lines << (m_model.mayHoldMore() ? tr("The first %1 dead letters (the queue may hold more).")
                                              .arg(m_model.rowCount())
                                        : tr("%n dead letter(s).", nullptr, m_model.rowCount()));
    }
    if (!m_pendingRequeue.isEmpty())
        lines << tr("Requeueing…");
    else if (!m_result.isEmpty())
        lines << m_result;
    const bool red = !m_error.isEmpty() || (m_pendingRequeue.isEmpty() && m_resultFailed);
    m_status->setStyleSheet(red ? QStringLiteral("color:%1").arg(errorText().name()) : QString());
    m_status->setText(lines.join(u' '));
}

} // namespace cmq::admingui
