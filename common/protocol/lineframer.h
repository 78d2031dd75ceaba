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
    QByteArrayView line;    // points into the caller's buffer
    qsizetype consumed = 0; // bytes to drop from the front of the buffer (0 unless Ok/InvalidUtf8)
    // Incomplete: the bytes at the front now known to hold no "\n". Passed back as
    // `alreadyScanned` once more bytes have arrived, so a long line is searched only once.
    qsizetype scanned = 0;
};

// Looks at the front of `buffer` only. maxLineLength counts the line's bytes without the
// terminator; a line of exactly maxLineLength bytes (plus "\r\n" or "\n") is accepted.
// `alreadyScanned` bytes at the front are taken to hold no "\n" (the `scanned` of the previous
// Incomplete frame of the same line) and are not searched again: framing costs time in
// proportion to the bytes received, not to the line length times the number of reads.
Frame takeLine(QByteArrayView buffer, qsizetype maxLineLength, qsizetype alreadyScanned = 0);

bool isValidUtf8(QByteArrayView bytes);

} // namespace cmq::protocol
