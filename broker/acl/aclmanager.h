#pragma once
// Who may do what: certificate CN → roles (from the acl.* lists), the command matrix, and the
// resource rules that keep receivers inside their own namespace ("{cn}_...").

#include <QFlags>
#include <QSet>
#include <QString>

#include "config/config.h"
#include "core/refusal.h"
#include "protocol/request.h"

namespace cmq {

enum class Role : quint8 {
    Sender = 0x1,
    Receiver = 0x2,
    Admin = 0x4,
};
Q_DECLARE_FLAGS(Roles, Role)
Q_DECLARE_OPERATORS_FOR_FLAGS(Roles)

// "sender,receiver" or "unknown", for logs and error lines.
QString rolesToString(Roles roles);

class AclManager
{
public:
    explicit AclManager(const Config::Acl &acl = {});

    // A CN listed in several lists holds the union of those roles; empty means Unknown.
    Roles rolesFor(const QString &cn) const;

    // The command matrix (docs/ACL.md). Admin may run everything.
    static bool mayRun(Roles roles, protocol::Command command);

    // Resource rules for receivers (admins pass): a queue must be named "{cn}_...", a routing
    // key must be the CN or start with "{cn}_". A refusal names the rule (Refusal::Kind).
    static Verdict mayUseQueue(Roles roles, const QString &cn, const QString &queue);
    static Verdict mayBindRoutingKey(Roles roles, const QString &cn, const QString &routingKey);
    // The rule a binding to an exchange of `exchangeType` adds (after mayBindRoutingKey), for
    // receivers (admins pass): the type's own, ExchangeType::mayBind (a fanout exchange takes
    // bindings from its creator only; a topic pattern starts with the literal words of the CN).
    static Verdict mayBindToExchange(Roles roles, const QString &cn, const QString &exchange,
                                     const QString &exchangeType, const QString &creator,
                                     const QString &bindingKey);

    // The owner rule, for a queue that exists (after mayUseQueue): a queue a receiver declared
    // inside its own namespace stays that receiver's, even if an ACL change later gives another
    // CN a namespace covering it. Admins pass; a queue an admin declared (or one with no
    // recorded owner) is held to the namespace rule alone, so an admin may provision a
    // receiver's queue for it.
    static Verdict mayUseOwnedQueue(Roles roles, const QString &cn, const QString &queue,
                                    const QString &owner);

    // The refusal of a command the roles may not run.
    static Refusal commandDenied(Roles roles, protocol::Command command);

private:
    QSet<QString> m_senders;
    QSet<QString> m_receivers;
    QSet<QString> m_admins;
};

} // namespace cmq
