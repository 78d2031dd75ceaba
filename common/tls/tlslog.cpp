#include "tls/tlslog.h"

namespace cmq::tls {
Q_LOGGING_CATEGORY(lcTls, "ciphermq.tls")
} // namespace cmq::tls
