#pragma once
// Message ids in the existing clients' form, "{sender}-{correlation}-{receiver}", with a UUID as
// the correlation part, so ids are unique across processes and restarts.

#include <QString>

namespace cmq::client {

// A fresh UUID without braces ("0b6e...-...").
QString newCorrelationId();

QString makeMessageId(const QString &sender, const QString &correlationId, const QString &receiver);

struct MessageIdParts
{
    QString sender;
    QString correlationId;
    QString receiver;
};

// Splits an id made by makeMessageId (names may contain '-'; the UUID in the middle is what is
// looked for). Empty parts when the id has another form.
MessageIdParts parseMessageId(const QString &messageId);

} // namespace cmq::client
