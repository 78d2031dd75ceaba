#pragma once
// What each admin command does (docs/ADMIN-PROTOCOL.md, "Commands"): the read-only views,
// the actions (purge, delete_queue, disconnect, reload) and the watch stream. Completes each
// request with exactly one reply through AdminSession::sendReply. Every action goes on the
// audit trail before its reply; a read-only identity's is refused (and goes there too).

#include "admin/admincontext.h"
#include "admin/adminrequest.h"
#include "core/refusal.h"

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
    // Whether `session` may run actions (not listed in admin.readonly_cns).
    bool mayAct(const AdminSession &session) const;
    void refuseReadOnly(AdminSession &session, const admin::AdminRequest &request);
    // Records the action's outcome (`result`: ok, error or refused), then sends `reply`: the
    // reply waits for the database to have the record.
    void finishAction(AdminSession &session, const char *action, const QString &target,
                      const char *result, const QString &detail, const QByteArray &reply);
    // finishAction with "error": the refusal's text as the audit detail, its line as the reply.
    void refused(AdminSession &session, const char *action, const QString &target,
                 const Refusal &refusal);
    void audit(AdminSession &session, int count);
    void reload(AdminSession &session);
    void purge(AdminSession &session, const QString &queue);
    void requeue(AdminSession &session, const QString &queue, int max);
    void deleteQueue(AdminSession &session, const QString &queue);
    void disconnect(AdminSession &session, quint64 id);
    // admincommandsdata.cpp: the message-metadata listing and the definitions pair.
    void queueMessages(AdminSession &session, const admin::AdminRequest &request);
    void exportDefinitions(AdminSession &session);
    void importDefinitions(AdminSession &session, const QByteArray &json);
    // The snapshot fields about the requester and the audit trail (docs/ADMIN-PROTOCOL.md).
    void addSessionFields(QJsonObject &snapshot, const AdminSession &session) const;

    AdminContext &m_context;
    AdminServer &m_server;
};

} // namespace cmq
