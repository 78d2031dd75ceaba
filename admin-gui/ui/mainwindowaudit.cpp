// The parts of MainWindow that follow what the broker says about this session: its role (a
// read-only operator's actions are greyed with the reason) and the audit trail.

#include "ui/mainwindow.h"
#include "ui/tablepage.h"

namespace cmq::admingui {

void MainWindow::followSession(const QJsonObject &snapshot)
{
    const QJsonObject session = snapshot.value(u"session").toObject();
    const QString refusal =
        session.value(u"read_only").toBool()
            ? tr("Read-only: the broker lists %1 in admin.readonly_cns, so it may watch and "
                 "export but not purge, delete or disconnect.")
                  .arg(session.value(u"cn").toString())
            : QString();
    if (refusal != m_actionsRefusal) {
        m_actionsRefusal = refusal;
        m_queuesPage->setActionsAllowed(refusal.isEmpty(), refusal);
        m_connectionsPage->setActionsAllowed(refusal.isEmpty(), refusal);
        const QString cn = session.value(u"cn").toString();
        QString identity = m_identity->text();
        const QString mark = tr(" (read-only)");
        identity.remove(mark);
        m_identity->setText(refusal.isEmpty() || cn.isEmpty() ? identity : identity + mark);
    }
    // A broker without the trail (older) sends no "audit": nothing to fetch then.
    const QJsonValue lastId = snapshot.value(u"audit").toObject().value(u"last_id");
    if (!lastId.isUndefined() && lastId.toInteger() != m_auditFetchedId) {
        m_auditFetchedId = lastId.toInteger();
        m_session.fetchAudit(AuditTableModel::FetchCount);
    }
}

} // namespace cmq::admingui
