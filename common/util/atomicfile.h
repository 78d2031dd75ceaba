#pragma once
// Writing a whole file so that nobody ever sees it half-written or, for secrets, readable by
// others for even a moment: the content goes into a temporary beside the target whose mode is
// set before the first byte, and the temporary is then renamed (or linked) into place.

#include <sys/types.h>

#include <QByteArrayView>
#include <QString>

#include "util/result.h"

namespace cmq {

enum class ExistingFile {
    Refuse,  // fail when `path` exists (checked atomically: link(2), not a test then a write)
    Replace, // replace it atomically
};

// Writes `content` to `path` with exactly `mode` (the umask does not apply), fsyncs it and
// moves it into place. The directory must exist.
Status writeFileAtomically(const QString &path, QByteArrayView content, mode_t mode,
                           ExistingFile existing);

} // namespace cmq
