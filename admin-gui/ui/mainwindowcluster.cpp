// MainWindow and a high-availability deployment: every window shows its node's role (from
// the snapshot's "cluster" section), and the first window of a profile with several nodes
// follows the active one: finding its node standing by, it connects to the profile's next node.

#include "ui/mainwindow.h"

namespace cmq::admingui {

void MainWindow::followCluster(const QJsonObject &snapshot)
{
    const QJsonObject cluster = snapshot.value(u"cluster").toObject();
    const QString role = nodeRoleText(cluster);
    m_role->setText(role.isEmpty() ? QString() : tr("Role: %1").arg(role));
    m_role->setVisible(!role.isEmpty());
    if (m_followNodes.isEmpty())
        return;
    if (cluster.value(u"role").toString() != QLatin1String("standby")) {
        m_standbysSeen = 0;
        return;
    }
    // Every node standing by (a takeover under way): stay, and look again at the next lap.
    if (++m_standbysSeen >= m_followNodes.size()) {
        m_standbysSeen = 0;
        return;
    }
    const QString from = nodeName(m_session.options());
    m_followIndex = (m_followIndex + 1) % m_followNodes.size();
    const ConnectionOptions next = m_followNodes[m_followIndex];
    // Queued: this runs inside the session's snapshot signal, and reconnecting closes it.
    QMetaObject::invokeMethod(
        this,
        [this, from, next] {
            m_session.close(); // the open connection; connectTo() starts a new one
            connectTo(next);
            showBanner(
                tr("%1 is standing by; following the active node: %2.").arg(from, nodeName(next)),
                false);
        },
        Qt::QueuedConnection);
}

} // namespace cmq::admingui
