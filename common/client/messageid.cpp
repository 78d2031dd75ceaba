#include "client/messageid.h"

#include <QRegularExpression>
#include <QUuid>

namespace cmq::client {

QString newCorrelationId()
{
    return QUuid::createUuid().toString(QUuid::WithoutBraces);
}

QString makeMessageId(const QString &sender, const QString &correlationId, const QString &receiver)
{
    return sender + u'-' + correlationId + u'-' + receiver;
}

MessageIdParts parseMessageId(const QString &messageId)
{
    static const QRegularExpression form(
        QStringLiteral("^(.+)-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-"
                       "fA-F]{12})-(.+)$"));
    const QRegularExpressionMatch match = form.match(messageId);
    if (!match.hasMatch())
        return {};
    return {match.captured(1), match.captured(2), match.captured(3)};
}

} // namespace cmq::client
