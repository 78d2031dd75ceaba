#pragma once
// What command handlers may use: the router, the key directory in storage, the ACL and the
// configuration. Handlers never see sockets or SQL.

#include "acl/aclmanager.h"
#include "config/config.h"

namespace cmq {

class Presence;
class Router;
class Session;
namespace storage {
class Storage;
}
namespace limits {
class RateLimiter;
}

struct Services
{
    Router &router;
    storage::Storage &storage;
    const AclManager &acl;
    const Config &config;
    limits::RateLimiter *rateLimiter = nullptr; // null: no rate limits (unit tests)
    Presence *presence = nullptr;               // null: presence refused to everyone
};

struct HandlerContext
{
    Services &services;
    Session &session;
};

} // namespace cmq
