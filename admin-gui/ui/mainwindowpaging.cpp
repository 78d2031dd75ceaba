// Server-side paging of the Queues, Connections, Rate limits and Talkers tabs (issue 17 item 9):
// above ListPager::PagingThreshold rows the watch asks the broker for the page the tab shows,
// with the tab's filter and sort, instead of every queue, connection, bucket and talker each
// second. And the watch asks for the rate-limit buckets only while their tab is shown: at 5,000
// client CNs they are 5,000 rows a second that no other view reads (see docs/ADMIN-GUI.md,
// "Responsiveness"). The talkers' page is asked for hidden or shown: the chart's history
// follows it.

#include "ui/mainwindow.h"
#include "ui/tablepage.h"
#include "ui/talkerspage.h"

namespace cmq::admingui {

void MainWindow::addPaging()
{
    m_queuePager = ListPager::forQueues(this);
    m_connectionPager = ListPager::forConnections(this);
    m_rateLimitPager = ListPager::forRateLimits(this);
    m_talkerPager = ListPager::forTalkers(this);
    m_queuesPage->attachPager(m_queuePager);
    m_connectionsPage->attachPager(m_connectionPager);
    m_rateLimitsPage->attachPager(m_rateLimitPager);
    m_talkersPage->table()->attachPager(m_talkerPager);
    const auto askForPages = [this] {
        admin::SnapshotPaging paging;
        paging.queues = m_queuePager->request();
        paging.connections = m_connectionPager->request();
        // Sent only while the watch carries the buckets (AdminSession::watchLine).
        paging.ratelimits = m_rateLimitPager->request();
        paging.talkers = m_talkerPager->request();
        m_session.setPaging(paging);
    };
    for (ListPager *pager : {m_queuePager, m_connectionPager, m_rateLimitPager, m_talkerPager})
        connect(pager, &ListPager::requestChanged, this, askForPages);
    connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::followTab);
    followTab();
}

admin::Sections MainWindow::sectionsFor(int tab)
{
    using admin::Section;
    // Queues, bindings and connections feed more than their tabs (Overview, detail windows,
    // certificate banners, consumer links); the talkers' rates need every snapshot (history).
    admin::Sections sections = Section::Queues | Section::Exchanges | Section::Bindings |
                               Section::Connections | Section::Talkers;
    if (tab == RateLimitsTab)
        sections |= Section::RateLimits;
    return sections;
}

void MainWindow::followTab()
{
    const int tab = m_tabs->currentIndex();
    // A new watch line answers with a snapshot at once, so an opened Rate limits tab is
    // filled within a round trip; the Talkers tab shows what it followed while hidden.
    m_session.setSections(sectionsFor(tab));
    if (tab == TalkersTab)
        m_talkersPage->showPending();
}

void MainWindow::followPages(const QJsonObject &snapshot)
{
    m_queuePager->followSnapshot(snapshot);
    m_connectionPager->followSnapshot(snapshot);
    m_rateLimitPager->followSnapshot(snapshot);
    m_talkerPager->followSnapshot(snapshot);
}

} // namespace cmq::admingui
