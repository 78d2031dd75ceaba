// MainWindow and a high-availability deployment: every window shows its node's role (from
// the snapshot's "cluster" section), and the first window of a profile with several nodes
// follows the active one: finding its node standing by, or finding it gone (the active killed
// or its host down, which is when a standby takes over) in a profile where some node has been
// seen standing by, it connects to the profile's next node.

#include <QTimer>

#include "ui/mainwindow.h"

namespace cmq::admingui {

void MainWindow::followCluster(const QJsonObject &snapshot)
{
    const QJsonObject cluster = snapshot.value(u"cluster").toObject();
    const QString role = nodeRoleText(cluster);
    m_role->setText(role.isEmpty() ? QString() : tr("Role: %1").arg(role));
    m_role->setVisible(!role.isEmpty());
    if (m_profileHasStandby && cluster.value(u"role").toString() == QLatin1String("standby"))
        *m_profileHasStandby = true;
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
    followTo(m_followNodes[m_followIndex],
             tr("%1 is standing by; following the active node: %2.")
                 .arg(from, nodeName(m_followNodes[m_followIndex])),
             0);
}

void MainWindow::followPastUnreachable()
{
    // Independent brokers side by side: a restart of this one is waited for, as without a
    // profile.
    if (m_followNodes.size() < 2 || !m_profileHasStandby || !*m_profileHasStandby)
        return;
    const QString from = nodeName(m_session.options());
    m_followIndex = (m_followIndex + 1) % m_followNodes.size();
    // At the session's own retry pace: while the standby is still taking over, the window
    // goes round the nodes every couple of seconds, not as fast as connections fail.
    followTo(m_followNodes[m_followIndex],
             tr("%1 cannot be reached; trying the next node: %2.")
                 .arg(from, nodeName(m_followNodes[m_followIndex])),
             m_session.reconnectDelayMs());
}

void MainWindow::followTo(const ConnectionOptions &next, const QString &why, int delayMs)
{
    // Queued: this runs inside one of the session's signals, and reconnecting closes it.
    // close() also stops the session's own retry of the node left behind.
    QMetaObject::invokeMethod(this, [this] { m_session.close(); }, Qt::QueuedConnection);
    QTimer::singleShot(delayMs, this, [this, next, why] {
        if (!(m_followNodes.value(m_followIndex) == next))
            return; // overtaken: the operator or a later step chose another node
        m_session.close();
        connectTo(next);
        showBanner(why, false);
    });
}

} // namespace cmq::admingui
