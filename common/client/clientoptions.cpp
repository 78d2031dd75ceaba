#include "client/clientoptions.h"

namespace cmq::client {

QString Conventions::queueFor(const QString &name) const
{
    return QString(queuePattern).replace(QStringLiteral("{name}"), name);
}

QString Conventions::routingKeyFor(const QString &name) const
{
    return QString(routingKeyPattern).replace(QStringLiteral("{name}"), name);
}

} // namespace cmq::client
