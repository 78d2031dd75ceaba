#include "storagelog.h"

namespace cmq::storage {
Q_LOGGING_CATEGORY(lcStorage, "ciphermq.storage")
} // namespace cmq::storage
