#pragma once
// What each admin command does (docs/ADMIN-PROTOCOL.md, "Commands"): the read-only views,
// the actions (purge, delete_queue, disconnect, reload) and the watch stream. Completes each
// request with exactly one reply through AdminSession::sendReply.

#include "admin/admincontext.h"
#include "admin/adminrequest.h"

namespace cmq {

class AdminServer;
class AdminSession;

class AdminCommands
{
public:
    AdminCommands(AdminContext &context, AdminServer &server);

    void execute(AdminSession &session, const admin::AdminRequest &request);
    // A watch interval elapsed for `session`.
    void watchDue(AdminSession &session);

private:
    void purge(AdminSession &session, const QString &queue);
    void deleteQueue(AdminSession &session, const QString &queue);
    void disconnect(AdminSession &session, quint64 id);
    QByteArray snapshotLine(AdminSession &session, admin::Sections sections) const;

    AdminContext &m_context;
    AdminServer &m_server;
};

} // namespace cmq
