#include "client/brokeraddress.h"

#include <QStringList>

namespace cmq::client {

QString BrokerAddress::toString() const
{
    const bool ipv6 = host.contains(u':');
    return (ipv6 ? u'[' + host + u']' : host) + u':' + QString::number(port);
}

static Result<BrokerAddress> parseOne(const QString &entry)
{
    using R = Result<BrokerAddress>;
    BrokerAddress address;
    QString portText;
    bool hasPort = false;
    if (entry.startsWith(u'[')) {
        const qsizetype close = entry.indexOf(u']');
        if (close < 0)
            return R::failure(
                QStringLiteral("'%1': missing ']' after the IPv6 address").arg(entry));
        address.host = entry.mid(1, close - 1);
        const QString rest = entry.mid(close + 1);
        if (!rest.isEmpty()) {
            if (!rest.startsWith(u':'))
                return R::failure(QStringLiteral("'%1': expected ':port' after ']'").arg(entry));
            portText = rest.mid(1);
            hasPort = true;
        }
    } else {
        const qsizetype colon = entry.lastIndexOf(u':');
        if (colon >= 0 && entry.indexOf(u':') != colon)
            return R::failure(
                QStringLiteral("'%1': write IPv6 addresses in brackets, [::1]:5671").arg(entry));
        address.host = colon < 0 ? entry : entry.left(colon);
        if (colon >= 0) {
            portText = entry.mid(colon + 1);
            hasPort = true;
        }
    }
    if (address.host.isEmpty())
        return R::failure(QStringLiteral("'%1': the host is empty").arg(entry));
    if (hasPort) {
        bool ok = false;
        const uint port = portText.toUInt(&ok);
        if (!ok || port == 0 || port > 65535)
            return R::failure(QStringLiteral("'%1': the port must be 1 to 65535").arg(entry));
        address.port = quint16(port);
    }
    return address;
}

Result<QList<BrokerAddress>> parseBrokerList(const QString &text)
{
    using R = Result<QList<BrokerAddress>>;
    QList<BrokerAddress> addresses;
    for (const QString &raw : text.split(u',')) {
        const QString entry = raw.trimmed();
        if (entry.isEmpty())
            continue;
        auto address = parseOne(entry);
        if (!address)
            return R::failure(address.error());
        addresses.append(address.value());
    }
    if (addresses.isEmpty())
        return R::failure(QStringLiteral("no broker address given (host:port[,host:port...])"));
    return addresses;
}

} // namespace cmq::client
