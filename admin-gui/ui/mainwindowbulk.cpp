// MainWindow's bulk actions: purge, delete or disconnect every selected row after one
// confirmation that lists the targets and their messages, with progress in the banner while the
// requests run one by one and a summary of each outcome at the end.

#include <memory>

#include <QShortcut>

#include "ui/mainwindow.h"
#include "ui/tablepage.h"

namespace cmq::admingui {

void MainWindow::addActionShortcuts()
{
    // On the page they act on only: Delete on the Queues tab deletes queues, on the
    // Connections tab disconnects.
    const auto add = [this](QWidget *page, const QKeySequence &keys, void (MainWindow::*slot)()) {
        auto *shortcut = new QShortcut(keys, page);
        shortcut->setContext(Qt::WidgetWithChildrenShortcut);
        connect(shortcut, &QShortcut::activated, this, slot);
    };
    add(m_queuesPage, QKeySequence(QStringLiteral("Ctrl+Shift+P")),
        &MainWindow::purgeSelectedQueue);
    add(m_queuesPage, QKeySequence::Delete, &MainWindow::deleteSelectedQueue);
    add(m_connectionsPage, QKeySequence::Delete, &MainWindow::disconnectSelectedConnection);
}

void MainWindow::selectWhenListed(const QStringList &keys)
{
    // The rows exist once a snapshot lists them; select them in the first that does.
    auto *page = qobject_cast<TablePage *>(m_tabs->currentWidget());
    if (!page || keys.isEmpty())
        return;
    auto connection = std::make_shared<QMetaObject::Connection>();
    *connection =
        connect(&m_session, &AdminSession::snapshotReceived, this, [page, keys, connection] {
            if (page->selectKeys(keys) == keys.size()) {
                page->view()->setFocus();
                QObject::disconnect(*connection);
            }
        });
}

QList<BulkAction::Target> MainWindow::selectedQueueTargets(const QString &action,
                                                           bool withUnacked) const
{
    QList<BulkAction::Target> targets;
    for (const int row : m_queuesPage->selectedSourceRows()) {
        const QJsonObject q = m_queues.rowObject(row);
        const QString name = q.value(u"name").toString();
        const qint64 messages =
            q.value(u"ready").toInteger() + (withUnacked ? q.value(u"unacked").toInteger() : 0);
        targets.append({name, action + u' ' + name, messages});
    }
    return targets;
}

QList<BulkAction::Target> MainWindow::selectedConnectionTargets() const
{
    QList<BulkAction::Target> targets;
    for (const int row : m_connectionsPage->selectedSourceRows()) {
        const QJsonObject c = m_connections.rowObject(row);
        const qint64 id = c.value(u"id").toInteger();
        targets.append({tr("%1 (%2 from %3)")
                            .arg(id)
                            .arg(c.value(u"cn").toString(), c.value(u"address").toString()),
                        QStringLiteral("disconnect %1").arg(id), c.value(u"unacked").toInteger()});
    }
    return targets;
}

void MainWindow::runBulk(const QString &title, const QString &verb,
                         QList<BulkAction::Target> targets, const QString &consequence)
{
    if (targets.isEmpty() || (m_bulk && m_bulk->isRunning()))
        return;
    if (!m_confirm(title, BulkAction::confirmationText(verb, targets, consequence)))
        return;
    if (m_bulk)
        m_bulk->deleteLater();
    m_bulk = new BulkAction(m_session, verb, std::move(targets), this);
    connect(m_bulk, &BulkAction::progress, this,
            [this, verb](int done, int total, const QString &current) {
                showBanner(
                    tr("%1: %2 of %3 done, now %4…").arg(verb).arg(done).arg(total).arg(current),
                    false);
            });
    connect(m_bulk, &BulkAction::finished, this,
            [this](const QString &summary, bool allOk) { showBanner(summary, !allOk); });
    m_bulk->start();
}

} // namespace cmq::admingui
