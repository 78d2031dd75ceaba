#pragma once
// Where the test fixtures live: certificates made by tests/certs/gen.sh and the throwaway
// PostgreSQL server started by tests/support/postgres.sh (both CTest fixtures).

#include <QString>

namespace cmq::test {

// Absolute path of a file in the generated certificate directory ($CMQ_TEST_CERTS).
QString certFile(const QString &fileName);

// A TCP port on 127.0.0.1 that was free a moment ago.
quint16 freePort();

} // namespace cmq::test
