#pragma once
// Splits a byte stream into protocol lines. A pure function: no sockets, no state.

#include <QByteArrayView>

namespace cmq::protocol {

enum class FrameStatus {
    Ok,          // a complete line; `line` excludes "\n" and a trailing "\r"
    Incomplete,  // no "\n" yet and the buffer is still within the limit: read more
    TooLong,     // no "\n" within maxLineLength bytes: the peer must be cut off
    InvalidUtf8, // a complete line that is not valid UTF-8; `consumed` skips it
};

struct Frame
{
    FrameStatus status = FrameStatus::Incomplete;
    QByteArrayView line;   // points into the caller's buffer
    qsizetype consumed = 0; // bytes to drop from the front of the buffer (0 unless Ok/InvalidUtf8)
};

// Looks at the front of `buffer` only. maxLineLength counts the line's bytes without the
// terminator; a line of exactly maxLineLength bytes (plus "\r\n" or "\n") is accepted.
Frame takeLine(QByteArrayView buffer, qsizetype maxLineLength);

bool isValidUtf8(QByteArrayView bytes);

} // namespace cmq::protocol
