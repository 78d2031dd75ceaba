#pragma once
// What the window's alarm banner lists for one snapshot: the broker's own alarms (memory
// alarm, database unreachable) and certificates that expire soon — the broker's and its CA's
// (from the admin connection's TLS session) and those of connected clients (from the
// snapshot). Pure: snapshot, chain and clock in, lines out, so tests pick the time.

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QSslCertificate>
#include <QString>

namespace cmq::admingui {

struct BrokerAlarm
{
    enum class Severity { Critical, Warning };
    Severity severity = Severity::Warning;
    QString text;
    bool operator==(const BrokerAlarm &) const = default;
};

// Certificates that expire within this many days are listed.
constexpr int kExpiryWarningDays = 30;

// Critical ones first, then by text; a client certificate used by several connections once.
QList<BrokerAlarm> brokerAlarms(const QJsonObject &snapshot,
                                const QList<QSslCertificate> &serverChain,
                                const QDateTime &now);

} // namespace cmq::admingui
