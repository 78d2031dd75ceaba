#include "ui/queuemessagespanel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include "models/adminsession.h"
#include "models/palettecolors.h"
#include "ui/listtable.h"

namespace cmq::admingui {

QueueMessagesPanel::QueueMessagesPanel(const QString &queue, QWidget *parent)
    : QWidget(parent), m_filter(new QLineEdit), m_first(new QPushButton(tr("First"))),
      m_previous(new QPushButton(tr("◀ Previous"))), m_next(new QPushButton(tr("Next ▶"))),
      m_reload(new QPushButton(tr("Reload"))), m_status(new QLabel), m_view(makeListTable(&m_model))
{
    m_model.setQueue(queue);
    m_filter->setObjectName(QStringLiteral("messageFilter"));
    m_filter->setPlaceholderText(tr("Filter by sender CN or routing key (Enter)"));
    m_filter->setClearButtonEnabled(true);

    connect(m_filter, &QLineEdit::returnPressed, this, [this] { setFilter(m_filter->text()); });
    connect(m_first, &QPushButton::clicked, this, &QueueMessagesPanel::showFirstPage);
    connect(m_previous, &QPushButton::clicked, this, &QueueMessagesPanel::showPreviousPage);
    connect(m_next, &QPushButton::clicked, this, &QueueMessagesPanel::showNextPage);
    connect(m_reload, &QPushButton::clicked, this, &QueueMessagesPanel::reload);

    auto *note = new QLabel(tr("Metadata only: the broker cannot read message contents."));
    note->setEnabled(false);
    auto *controls = new QHBoxLayout;
    controls->addWidget(m_filter, 1);
    for (QPushButton *button : {m_first, m_previous, m_next, m_reload})
        controls->addWidget(button);
    auto *footer = new QHBoxLayout;
    footer->addWidget(m_status, 1);
    footer->addWidget(note);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_view, 1);
    layout->addLayout(footer);
    updateControls();
}

void QueueMessagesPanel::attach(AdminSession &session)
{
    if (m_session == &session)
        return;
    m_session = &session;
    connect(&session, &AdminSession::queueMessagesReceived, this, &QueueMessagesPanel::onPage);
    // A window opened before the session is up (--queue at start-up) asks once it is, and
    // after a reconnect the page shown is asked for again.
    connect(&session, &AdminSession::stateChanged, this, [this](AdminSession::State state) {
        if (state == AdminSession::State::Connected)
            m_model.pageNumber() == 0 ? showFirstPage() : reload();
    });
    if (session.state() == AdminSession::State::Connected)
        showFirstPage();
}

QString QueueMessagesPanel::statusText() const
{
    return m_status->text();
}

void QueueMessagesPanel::showFirstPage()
{
    send(m_model.firstPageRequest());
}

void QueueMessagesPanel::showNextPage()
{
    send(m_model.nextPageRequest());
}

void QueueMessagesPanel::showPreviousPage()
{
    send(m_model.previousPageRequest());
}

void QueueMessagesPanel::reload()
{
    send(m_model.reloadRequest());
}

void QueueMessagesPanel::setFilter(const QString &filter)
{
    m_filter->setText(filter);
    m_model.setFilter(filter);
    showFirstPage();
}

void QueueMessagesPanel::send(const QString &line)
{
    if (line.isEmpty() || !m_session)
        return;
    m_session->fetchQueueMessages(line);
}

void QueueMessagesPanel::onPage(const QJsonObject &page, const QString &error)
{
    if (!error.isEmpty()) {
        // A reply to another panel's request fails the same way; showing it here is harmless.
        m_error = error;
    } else if (m_model.applyPage(page)) {
        m_error.clear();
    } else {
        return; // another queue's page, or an older request
    }
    updateControls();
}

void QueueMessagesPanel::updateControls()
{
    m_previous->setEnabled(m_model.hasPreviousPage());
    m_first->setEnabled(m_model.hasPreviousPage());
    m_next->setEnabled(m_model.hasNextPage());
    if (!m_error.isEmpty()) {
        m_status->setStyleSheet(QStringLiteral("color:%1").arg(errorText().name()));
        m_status->setText(m_error);
        return;
    }
    m_status->setStyleSheet({});
    if (m_model.pageNumber() == 0) {
        m_status->setText(tr("Loading…"));
        return;
    }
    const QString rows =
        m_model.rowCount() == 0
            ? (m_model.filter().isEmpty() ? tr("The queue is empty.")
                                          : tr("No message matches \"%1\".").arg(m_model.filter()))
            : tr("%n message(s)", nullptr, m_model.rowCount());
    m_status->setText(tr("Page %1%2: %3")
                          .arg(m_model.pageNumber())
                          .arg(m_model.hasNextPage() ? tr(" (more after)") : QString(), rows));
}

} // namespace cmq::admingui
