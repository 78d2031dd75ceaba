#pragma once
// Routes a parsed request through the checks every command shares (the ACL's command matrix,
// then rate limits) to the one handler for that command, and turns refusals into reply lines.

#include "core/services.h"
#include "protocol/request.h"

namespace cmq {

class Reply;
class Session;

class Dispatcher
{
public:
    explicit Dispatcher(Services &services);

    // The checks of a parsed request the parser in common/ cannot make, as they need the
    // broker's registries: a declare_exchange type the registry does not know. A request that
    // fails one becomes malformed, as if the parser had refused it, so that it is answered
    // where a parse error is (refuseMalformed, before the ACL and the rate limits).
    static void checkParsed(protocol::ParseResult &parsed);
    void dispatch(Session &session, const protocol::Request &request, const Reply &reply);
    // A line that could not be parsed: answered with `errorLines` if the sender's request rate
    // allows, refused like any request over it otherwise.
    void refuseMalformed(Session &session, const QByteArray &errorLines, const Reply &reply);
    bool isConsuming(Session &session) const;

private:
    bool exemptFromRateLimit(Session &session, const protocol::Request &request) const;

    Services &m_services;
};

} // namespace cmq
