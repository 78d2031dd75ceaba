#pragma once
// What the admin listener reads and acts on. All of it belongs to the Broker and outlives the
// admin server; `config` and `acl` are the running ones, which a reload updates in place.

#include <functional>

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QList>

#include "acl/aclmanager.h"
#include "config/config.h"
#include "util/result.h"

namespace cmq {

class AuditLog;
class Router;
class Session;
namespace storage {
class Storage;
}
namespace limits {
class RateLimiter;
}
namespace metrics {
class BrokerMetrics;
}

struct AdminContext
{
    Router &router;
    const AclManager &acl;
    const Config &config;
    const QList<QByteArray> &revokedSerials;
    limits::RateLimiter &limiter;
    metrics::BrokerMetrics &metrics;
    const QHash<quint64, Session *> &dataSessions;
    std::function<quint64()> nextConnectionId; // one id space for both listeners
    std::function<Result<QJsonObject>()> reload;
    std::function<int()> dataHandshakesInProgress;
    AuditLog &audit;
    storage::Storage &storage; // queue_messages reads the database, not the router's queues
};

} // namespace cmq
