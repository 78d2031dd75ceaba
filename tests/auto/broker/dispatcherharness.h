#pragma once
// The dispatcher and its handlers over a real Router on an in-memory store (routerfakes.h), for
// the unit tests that check what a request line gets back. The session sits on a TLS stream
// that never connects (no OS socket, no database, no TLS); replies are read from the Reply
// handle.

#include <memory>
#include <optional>

#include <QTest>

#include "acl/aclmanager.h"
#include "core/router.h"
#include "handlers/dispatcher.h"
#include "limits/clock.h"
#include "limits/memorybudget.h"
#include "limits/ratelimiter.h"
#include "net/session.h"
#include "net/tlsstream.h"
#include "protocol/request.h"
#include "routerfakes.h"
#include "storage/storage.h"

namespace cmq::test {

struct DispatcherHarness
{
    // `rateLimits`: none for no rate limiter. `performance`: the quotas and queue defaults.
    explicit DispatcherHarness(Roles roles,
                               const std::optional<Config::RateLimit> &rateLimits = std::nullopt,
                               const Config::Performance &performance = {})
        : config(configWith(performance)), storage(Config::Database{}, QByteArray(32, 'k')),
          router(store, config.performance, memory, nullptr, &clock),
          limiter(rateLimits ? std::make_unique<limits::RateLimiter>(*rateLimits, clock) : nullptr),
          services{router, storage, acl, config, limiter.get()}, dispatcher(services),
          session(new TlsStream(-1, nullptr), identity(roles), SessionLimits{}, dispatcher)
    {
    }
    static Config configWith(const Config::Performance &performance)
    {
        Config config;
        config.performance = performance;
        return config;
    }
    // Sender roles connect as sender_1, the others as receiver_1.
    static ClientIdentity identity(Roles roles)
    {
        ClientIdentity who;
        who.connectionId = 7;
        who.cn = roles.testFlag(Role::Sender) ? "sender_1" : "receiver_1";
        who.roles = roles;
        who.address = QHostAddress::LocalHost;
        return who;
    }
    // Dispatches `line` and returns the reply lines (null if no reply came).
    QByteArray run(const QByteArray &line)
    {
        protocol::ParseResult parsed = protocol::parseRequest(line);
        Dispatcher::checkParsed(parsed); // as the session does
        if (parsed.status != protocol::ParseStatus::Ok)
            return "parse failed: " + parsed.errorReply;
        QByteArray answer;
        dispatcher.dispatch(session, parsed.request,
                            Reply([&answer](const QByteArray &lines, quint64) { answer = lines; }));
        return answer;
    }

    FakeRouterStore store;
    limits::MemoryBudget memory;
    limits::ManualClock clock;
    Config config;
    AclManager acl;
    storage::Storage storage; // only for the key commands; never opened here
    Router router;
    std::unique_ptr<limits::RateLimiter> limiter;
    Services services;
    Dispatcher dispatcher;
    Session session;
};

} // namespace cmq::test
