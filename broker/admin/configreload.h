#pragma once
// What a configuration reload (`reload`, SIGHUP) may change at run time and what it may not:
// [acl], admin.allowed_cns, [rate_limit], [tls] and performance.memory_budget_mb are applied
// (the caller loads the TLS files and sets the budget); every other difference is reported as
// needing a restart.

#include <QJsonObject>
#include <QSslCertificate>
#include <QStringList>

#include "config/config.h"

namespace cmq {

// Dotted keys whose new value differs and only takes effect after a restart.
QStringList restartRequired(const Config &running, const Config &next);

// Copies the reloadable parts of `next` into `running`.
void applyReloadable(Config &running, const Config &next);

// The `reload` reply (docs/ADMIN-PROTOCOL.md, "Reload object"); serverCertificate and
// revokedSerials are the TLS material now in force, so a rotation can be confirmed.
QJsonObject reloadSummary(const Config &applied, int connectionsClosed, int connectionsUpdated,
                          const QStringList &restart, const QSslCertificate &serverCertificate,
                          qsizetype revokedSerials);

} // namespace cmq
