#include "acl/aclmanager.h"

#include <QStringList>

#include "core/exchangetype.h"

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

Refusal AclManager::commandDenied(Roles roles, Command command)
{
    return Refusal::of(Refusal::Kind::CommandDenied,
                       QString::fromLatin1(protocol::commandName(command)), rolesToString(roles));
}

Verdict AclManager::mayUseQueue(Roles roles, const QString &cn, const QString &queue)
{
    if (roles & Role::Admin)
        return accepted();
    if ((roles & Role::Receiver) && queue.startsWith(cn + u'_') && queue.size() > cn.size() + 1)
        return accepted();
    return Refusal::of(Refusal::Kind::QueueOutsideNamespace, queue, cn);
}

Verdict AclManager::mayBindRoutingKey(Roles roles, const QString &cn, const QString &routingKey)
{
    if (roles & Role::Admin)
        return accepted();
    // "{cn}" or "{cn}_...": a bare prefix match would let receiver_1 bind receiver_10's keys.
    if ((roles & Role::Receiver) && (routingKey == cn || routingKey.startsWith(cn + u'_')))
        return accepted();
    return Refusal::of(Refusal::Kind::RoutingKeyOutsideNamespace, routingKey, cn);
}

Verdict AclManager::mayBindToExchange(Roles roles, const QString &cn, const QString &exchange,
                                      const QString &exchangeType, const QString &creator,
                                      const QString &bindingKey)
{
    if (roles & Role::Admin)
        return accepted();
    // The type's own rule (FanoutExchange, TopicExchange); an unknown type adds none.
    if (const ExchangeType *type = findExchangeType(exchangeType))
        return type->mayBind(cn, exchange, creator, bindingKey);
    return accepted();
}

Verdict AclManager::mayUseOwnedQueue(Roles roles, const QString &cn, const QString &queue,
                                     const QString &owner)
{
    if ((roles & Role::Admin) || owner.isEmpty() || owner == cn)
        return accepted();
    if (!queue.startsWith(owner + u'_'))
        return accepted(); // not declared inside its declarer's namespace: an admin's
    return Refusal::of(Refusal::Kind::QueueOwnedByOther, queue, owner);
}

} // namespace cmq
