#include "acl/aclmanager.h"

#include <QStringList>

namespace cmq {

using protocol::Command;

QString rolesToString(Roles roles)
{
    QStringList names;
    if (roles & Role::Sender)
        names << QStringLiteral("sender");
    if (roles & Role::Receiver)
        names << QStringLiteral("receiver");
    if (roles & Role::Admin)
        names << QStringLiteral("admin");
    return names.isEmpty() ? QStringLiteral("unknown") : names.join(u',');
}

AclManager::AclManager(const Config::Acl &acl)
    : m_senders(acl.senderCns.cbegin(), acl.senderCns.cend()),
      m_receivers(acl.receiverCns.cbegin(), acl.receiverCns.cend()),
      m_admins(acl.adminCns.cbegin(), acl.adminCns.cend())
{
}

Roles AclManager::rolesFor(const QString &cn) const
{
    Roles roles;
    if (m_senders.contains(cn))
        roles |= Role::Sender;
    if (m_receivers.contains(cn))
        roles |= Role::Receiver;
    if (m_admins.contains(cn))
        roles |= Role::Admin;
    return roles;
}

// Which roles may run a command. Heartbeat and pong are open to every known role: liveness
// concerns senders as much as receivers (the seed allowed heartbeat to receivers only).
static Roles rolesAllowed(Command command)
{
    switch (command) {
    case Command::DeclareQueue:
    case Command::DeclareExchange:
    case Command::Bind:
    case Command::Consume:
    case Command::Fetch:
    case Command::Qos:
    case Command::Nack:
    case Command::QueuePolicy:
    case Command::RegisterPublicKey:
        return Role::Receiver;
    case Command::Publish:
    case Command::PublishBatch:
    case Command::GetPublicKey:
        return Role::Sender;
    case Command::Ack:
    case Command::Resend:
        return Roles(Role::Sender) | Role::Receiver;
    case Command::Heartbeat:
    case Command::Pong:
    case Command::Presence: // who may see whom: acl.presence_groups, checked by the handler
        return Roles(Role::Sender) | Role::Receiver;
    case Command::Unknown:
        return {};
    }
    return {};
}

bool AclManager::mayRun(Roles roles, Command command)
{
    if (command == Command::Unknown)
        return true; // answered with "Unknown command" by the dispatcher
    if (roles & Role::Admin)
        return true;
    return (roles & rolesAllowed(command)) != 0;
}

QString AclManager::commandDenied(Roles roles, Command command)
{
    return QStringLiteral("Permission denied: '%1' is not allowed for role %2")
        .arg(QLatin1String(protocol::commandName(command)), rolesToString(roles));
}

Status AclManager::mayUseQueue(Roles roles, const QString &cn, const QString &queue)
{
    if (roles & Role::Admin)
        return success();
    if ((roles & Role::Receiver) && queue.startsWith(cn + u'_') && queue.size() > cn.size() + 1)
        return success();
    return failure(QStringLiteral("Permission denied: queue '%1' is outside the namespace of %2 "
                                  "(receivers use queues named '%2_...')")
                       .arg(queue, cn));
}

Status AclManager::mayBindRoutingKey(Roles roles, const QString &cn, const QString &routingKey)
{
    if (roles & Role::Admin)
        return success();
    // "{cn}" or "{cn}_...": a bare prefix match would let receiver_1 bind receiver_10's keys.
    if ((roles & Role::Receiver) && (routingKey == cn || routingKey.startsWith(cn + u'_')))
        return success();
    return failure(
        QStringLiteral("Permission denied: routing key '%1' must be %2 or start with %2_")
            .arg(routingKey, cn));
}

Status AclManager::mayBindToExchange(Roles roles, const QString &cn, const QString &exchange,
                                     const QString &exchangeType, const QString &creator,
                                     const QString &bindingKey)
{
    if (roles & Role::Admin)
        return success();
    if (exchangeType == QLatin1String("fanout") && creator != cn) {
        return failure(QStringLiteral("Permission denied: fanout exchange '%1' takes bindings "
                                      "from its creator %2 only")
                           .arg(exchange, creator));
    }
    if (exchangeType == QLatin1String("topic")) {
        // The key starts with the CN (mayBindRoutingKey); a CN with dots spans several words,
        // none of which may be a wildcard ("a.#" binding its own CN "a.#" would match "a.b_x").
        qsizetype start = 0;
        while (start <= cn.size()) {
            qsizetype end = bindingKey.indexOf(u'.', start);
            if (end < 0)
                end = bindingKey.size();
            const QStringView word = QStringView(bindingKey).mid(start, end - start);
            if (word == u"*" || word == u"#") {
                return failure(QStringLiteral("Permission denied: topic pattern '%1' must "
                                              "start with the literal words of %2")
                                   .arg(bindingKey, cn));
            }
            start = end + 1;
        }
    }
    return success();
}

Status AclManager::mayUseOwnedQueue(Roles roles, const QString &cn, const QString &queue,
                                    const QString &owner)
{
    if ((roles & Role::Admin) || owner.isEmpty() || owner == cn)
        return success();
    if (!queue.startsWith(owner + u'_'))
        return success(); // not declared inside its declarer's namespace: an admin's
    return failure(QStringLiteral("Permission denied: queue '%1' belongs to %2").arg(queue, owner));
}

} // namespace cmq
