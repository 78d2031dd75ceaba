#include "client/clientlog.h"

Q_LOGGING_CATEGORY(lcClient, "ciphermq.client", QtInfoMsg)
