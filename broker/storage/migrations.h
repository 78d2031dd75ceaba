#pragma once
// The database schema as numbered migrations, applied in order at start-up. Each migration is
// SQL text per dialect and runs in one transaction together with its schema_version row.

#include "sqlsession.h"
#include "util/result.h"

namespace cmq::storage {

// The newest schema version this binary knows.
int latestSchemaVersion();

// Brings the database up to latestSchemaVersion(), or to `upToVersion` (for tests of an upgrade
// from an older schema). Refuses (and changes nothing) when the database is newer than this
// binary, which would otherwise write rows an older layout does not describe.
Status migrate(SqlSession &session, int upToVersion = -1);

// The version recorded in the database (0 when it has no schema yet).
Result<int> currentSchemaVersion(SqlSession &session);

} // namespace cmq::storage
