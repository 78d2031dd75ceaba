#pragma once
// The TLS subsystem's logging category (ciphermq.tls), declared once for common/tls and for
// the broker's TLS messages (refused handshakes, certificate and CRL warnings).

#include <QLoggingCategory>

namespace cmq::tls {
Q_DECLARE_LOGGING_CATEGORY(lcTls)
} // namespace cmq::tls
