#pragma once
// How a connection object's fields read in a table, shared by the Connections tab and the
// queue detail's consumers so both show the same text.

#include <QJsonObject>
#include <QString>

namespace cmq::admingui {

// "127.0.0.1:50514"
inline QString connectionAddress(const QJsonObject &connection)
{
    return QStringLiteral("%1:%2")
        .arg(connection.value(u"address").toString())
        .arg(connection.value(u"port").toInt());
}

// "2025-01-31 10:00:00" from the protocol's ISO 8601 UTC time.
inline QString connectedSince(const QJsonObject &connection)
{
    return connection.value(u"connected_at").toString().left(19).replace(u'T', u' ');
}

} // namespace cmq::admingui
