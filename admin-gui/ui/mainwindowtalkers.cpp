// The parts of MainWindow about who talks to the broker: the Talkers tab, and the links
// between a queue's consumers and their connections (one click from a consumer in a queue's
// detail window to its connection, one from a connection back to the queues it consumes).

#include <QJsonArray>

#include "ui/mainwindow.h"
#include "ui/tablepage.h"
#include "ui/talkerspage.h"

namespace cmq::admingui {

void MainWindow::addTalkersTab()
{
    m_talkersPage = new TalkersPage;
    m_tabs->addTab(m_talkersPage, tr("Talkers"));
    QPushButton *queues = m_connectionsPage->addButton(tr("Consumed queues"));
    queues->setToolTip(tr("Show the queues the selected connection consumes on the Queues tab"));
    connect(queues, &QPushButton::clicked, this, &MainWindow::showQueuesOfSelectedConnection);
}

void MainWindow::showTalkers(const QJsonObject &snapshot)
{
    // A broker without the section (older) sends none: the tab stays empty.
    m_talkersPage->showTalkers(
        snapshot.value(u"talkers").toArray(),
        snapshot.value(u"broker").toObject().value(u"uptime_seconds").toDouble(),
        m_tabs->currentWidget() == m_talkersPage);
}

bool MainWindow::showConnection(quint64 connectionId)
{
    m_tabs->setCurrentIndex(ConnectionsTab);
    m_connectionsPage->filter()->clear(); // a filter could hide the row
    raise();
    activateWindow();
    return m_connectionsPage->selectKey(QString::number(connectionId));
}

QStringList MainWindow::showQueuesOfSelectedConnection()
{
    const int row = m_connectionsPage->selectedSourceRow();
    if (row < 0)
        return {};
    const QJsonObject connection = m_connections.rowObject(row);
    QStringList queues;
    for (const QJsonValue &queue : connection.value(u"consumers").toArray())
        queues.append(queue.toString());
    if (queues.isEmpty()) {
        showBanner(tr("Connection %1 (%2) consumes no queue.")
                       .arg(connection.value(u"id").toInteger())
                       .arg(connection.value(u"cn").toString()),
                   false);
        return {};
    }
    m_tabs->setCurrentIndex(QueuesTab);
    m_queuesPage->filter()->clear();
    m_queuesPage->selectKeys(queues);
    return queues;
}

} // namespace cmq::admingui
