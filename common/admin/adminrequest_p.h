#pragma once
// Shared by the admin request parser's two files (adminrequestparser.cpp, pageoptions.cpp);
// not API.

#include <QByteArray>
#include <QByteArrayView>

#include "admin/adminrequest.h"

namespace cmq::admin::detail {

// An echo of client input in an error line: at most 64 characters, cut at a character.
QByteArray shortText(QByteArrayView text);
// A decimal number without sign; false when not one or above `max`.
bool parseNumber(QByteArrayView text, quint64 max, quint64 &value);
// One `<list>.<option>=<value>` argument into `paging`; an "Error: ..." text (without
// "Error: ") when it is not one. `seen` has a bit per list and option, so a repeated option is
// refused.
QByteArray parsePageOption(QByteArrayView arg, Sections allowed, SnapshotPaging &paging,
                           quint32 &seen);

} // namespace cmq::admin::detail
