#pragma once
// The one place a Refusal becomes text: the data handlers and the admin commands both send
// these, so each sentence is written once (in protocol/replies.cpp).

#include <QByteArray>
#include <QString>

#include "core/refusal.h"
#include "limits/ratelimiter.h"

namespace cmq::handlers {

// The refusal's text, without "Error: " (the audit trail and the definitions import keep it).
QByteArray refusalText(const Refusal &refusal);
// "Error: <text>\n".
QByteArray refusalLine(const Refusal &refusal);
// The rate limiter's refusal, without "Error: " (requests, batches and the connection refused).
QByteArray refusalText(const limits::Refusal &refusal);
// "Error: <text>\n" for a refused call, whatever it returns on success.
template <typename T> QByteArray refusalLine(const Outcome<T> &refused)
{
    return refusalLine(refused.refusal());
}

} // namespace cmq::handlers
