#pragma once
// The session's input framing: what the bytes at the front of a connection's input buffer are
// for the session (a request line to dispatch, a blank keep-alive, a line refused before parsing,
// a line too long to keep reading, or not a whole line yet). Pure, no socket and no session, so
// the rules are unit-tested with tables (tst_requestframer); the session acts on the answer.

#include <QByteArray>
#include <QByteArrayView>

namespace cmq {

struct RequestFrame
{
    enum class Kind {
        NeedMore, // no whole line yet: read more, pass `scanned` back next time
        Request,  // `line` is a request for the parser (not blank, valid UTF-8)
        Blank,    // a keep-alive: no reply, not counted as a request
        Refused,  // not valid UTF-8: answer with `replyLine`, go on with the next line
        TooLong,  // no line end within the limit: send `replyLine` and close the connection
    };
    Kind kind = Kind::NeedMore;
    QByteArrayView line;    // Request: points into the caller's buffer, without the line end
    QByteArray replyLine;   // Refused, TooLong: the error line, "\n" included
    qsizetype consumed = 0; // bytes to drop from the front of the buffer
    qsizetype scanned = 0;  // NeedMore: bytes at the front known to hold no "\n"
};

// Looks at the front of `buffer` only; `alreadyScanned` is the `scanned` of the previous
// NeedMore of the same line (protocol::takeLine).
RequestFrame nextRequestFrame(QByteArrayView buffer, qint64 maxLineBytes,
                              qsizetype alreadyScanned = 0);

} // namespace cmq
