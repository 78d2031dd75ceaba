#pragma once
// The client library's logging category (ciphermq.client).

#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcClient)
