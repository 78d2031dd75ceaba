#pragma once
// The sd_notify(3) protocol without libsystemd: under a Type=notify unit systemd passes a unix
// datagram socket in $NOTIFY_SOCKET and waits for "READY=1" before it counts the service as
// started (so units ordered after it, and `systemctl start`, wait for storage recovery and the
// listener). Outside systemd the variable is unset and every call is a successful no-op.

#include <QByteArray>
#include <QString>

#include "util/result.h"

namespace cmq {

// Sends one notification ("KEY=value" lines) to $NOTIFY_SOCKET. Fails only when the variable
// is set but the message cannot be delivered; the caller logs that and carries on.
Status sdNotify(const QByteArray &state);

// The notifications the broker sends; `status` is free text `systemctl status` shows.
Status sdNotifyReady(const QString &status);
Status sdNotifyStopping();
// Around a SIGHUP reload: RELOADING=1 first, sdNotifyReady() once the new settings apply.
Status sdNotifyReloading();

} // namespace cmq
