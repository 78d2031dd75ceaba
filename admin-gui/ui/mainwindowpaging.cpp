// Server-side paging of the Queues and Connections tabs (issue 17 item 9): above
// ListPager::PagingThreshold rows the watch asks the broker for the page the tab shows, with
// the tab's filter and sort, instead of every queue and connection each second.

#include "ui/mainwindow.h"
#include "ui/tablepage.h"

namespace cmq::admingui {

void MainWindow::addPaging()
{
    m_queuePager = ListPager::forQueues(this);
    m_connectionPager = ListPager::forConnections(this);
    m_queuesPage->attachPager(m_queuePager);
    m_connectionsPage->attachPager(m_connectionPager);
    const auto askForPages = [this] {
        admin::SnapshotPaging paging;
        paging.queues = m_queuePager->request();
        paging.connections = m_connectionPager->request();
        m_session.setPaging(paging);
    };
    connect(m_queuePager, &ListPager::requestChanged, this, askForPages);
    connect(m_connectionPager, &ListPager::requestChanged, this, askForPages);
}

void MainWindow::followPages(const QJsonObject &snapshot)
{
    m_queuePager->followSnapshot(snapshot);
    m_connectionPager->followSnapshot(snapshot);
}

} // namespace cmq::admingui
