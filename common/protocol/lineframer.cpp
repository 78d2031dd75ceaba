#include "protocol/lineframer.h"

#include <algorithm>
#include <cstring>

namespace cmq::protocol {

Frame takeLine(QByteArrayView buffer, qsizetype maxLineLength, qsizetype alreadyScanned)
{
    const qsizetype limit = std::max<qsizetype>(maxLineLength, 0);
    // A line of exactly `limit` bytes may still be followed by "\r\n", so the terminator can sit
    // at index limit + 1 at the latest; looking further would only scan bytes we will refuse.
    // (Compared before adding to stay clear of overflow for huge limits.)
    const bool pastLimit = buffer.size() - 2 >= limit;
    const qsizetype window = pastLimit ? limit + 2 : buffer.size();

    const auto *begin = buffer.data();
    const qsizetype from = std::clamp<qsizetype>(alreadyScanned, 0, window);
    const auto *newline =
        window > from
            ? static_cast<const char *>(std::memchr(begin + from, '\n', size_t(window - from)))
            : nullptr;
    Frame frame;
    if (!newline) {
        frame.status = pastLimit ? FrameStatus::TooLong : FrameStatus::Incomplete;
        frame.scanned = pastLimit ? 0 : window;
        return frame;
    }

    qsizetype length = newline - begin;
    if (length > 0 && begin[length - 1] == '\r')
        --length;
    if (length > limit) {
        // "\n" right after limit + 1 bytes that do not end in "\r".
        frame.status = FrameStatus::TooLong;
        return frame;
    }

    frame.line = QByteArrayView(begin, length);
    frame.consumed = newline - begin + 1;
    frame.status = isValidUtf8(frame.line) ? FrameStatus::Ok : FrameStatus::InvalidUtf8;
    return frame;
}

bool isValidUtf8(QByteArrayView bytes)
{
    // Qt's validator is strict (no overlongs, surrogates or code points above U+10FFFF, no
    // truncated sequences) and skips ASCII runs with SIMD, which is what a 1 MiB line of base64
    // needs. tst_lineframer pins the strictness down so a Qt change cannot loosen it unnoticed.
    return bytes.isValidUtf8();
}

} // namespace cmq::protocol
