#pragma once
// One admin action as the audit trail keeps it (docs/ADMIN-PROTOCOL.md, "audit"): in the
// broker's ring, in its log and in the admin_audit table.

#include <QDateTime>
#include <QString>

namespace cmq::storage {

struct AuditRecord
{
    qint64 id = 0;   // from 1, in the order the actions finished; kept across restarts
    QDateTime time;  // when the action finished, UTC
    QString cn;      // the admin identity (certificate CN)
    QString address; // its remote address
    QString action;  // the command: purge, delete_queue, disconnect, reload
    QString target;  // the queue, "<id>" of the connection, or the configuration file
    QString result;  // ok | error | refused
    QString detail;  // what it did ("purged 3 messages"), or the error text
};

} // namespace cmq::storage
