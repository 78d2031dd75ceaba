// The Queues tab's view of lag over time (issue 17, "lag as time"): the lag trend column
// reads the window's depth history, and the Depth column paints it as a sparkline. And which
// of its sixteen columns show at first, so that the table fits a 1280-pixel window.

#include "ui/mainwindow.h"
#include "ui/sparklinedelegate.h"
#include "ui/tablepage.h"

namespace cmq::admingui {

void MainWindow::addQueueTrendColumns()
{
    m_queues.setDepthHistory(&m_depthHistory);
    m_queuesPage->view()->setItemDelegateForColumn(QueueTableModel::Depth,
                                                   new SparklineDelegate(m_depthHistory, this));
    // The length limit and its overflow policy are the broker's default on nearly every queue
    // and stay in the detail window's figures; the header's context menu shows them again.
    m_queuesPage->hideColumnsByDefault({QueueTableModel::Limit, QueueTableModel::Overflow});
}

} // namespace cmq::admingui
