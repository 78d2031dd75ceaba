#pragma once
// The text a refused call is answered with (after "Error: "), for the tests that pin it.

#include <QString>

#include "handlers/refusalreplies.h"

namespace cmq::test {

// Empty when the call was not refused.
template <typename T> QString refusalText(const Outcome<T> &outcome)
{
    return outcome ? QString() : QString::fromUtf8(handlers::refusalText(outcome.refusal()));
}

} // namespace cmq::test
