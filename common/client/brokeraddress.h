#pragma once
// Where a broker listens, and the "host:port[,host:port...]" list form users write.

#include <QList>
#include <QString>

#include "util/result.h"

namespace cmq::client {

inline constexpr quint16 DefaultBrokerPort = 5671;

struct BrokerAddress
{
    QString host;
    quint16 port = DefaultBrokerPort;

    QString toString() const; // "host:port", IPv6 hosts in brackets
    friend bool operator==(const BrokerAddress &, const BrokerAddress &) = default;
};

// Parses "a:5671,b:5672", "[::1]:5671" or a bare host (port 5671). Whitespace around entries is
// ignored; an empty list, an empty host or a port outside 1..65535 is an error.
Result<QList<BrokerAddress>> parseBrokerList(const QString &text);

} // namespace cmq::client
