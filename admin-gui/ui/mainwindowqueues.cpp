// The Queues tab's view of lag over time (issue 17, "lag as time"): the lag trend column
// reads the window's depth history, and the Depth column paints it as a sparkline.

#include "ui/mainwindow.h"
#include "ui/sparklinedelegate.h"
#include "ui/tablepage.h"

namespace cmq::admingui {

void MainWindow::addQueueTrendColumns()
{
    m_queues.setDepthHistory(&m_depthHistory);
    m_queuesPage->view()->setItemDelegateForColumn(QueueTableModel::Depth,
                                                   new SparklineDelegate(m_depthHistory, this));
}

} // namespace cmq::admingui
