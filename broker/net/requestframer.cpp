#include "net/requestframer.h"

#include "protocol/lineframer.h"
#include "protocol/replies.h"

namespace cmq {

RequestFrame nextRequestFrame(QByteArrayView buffer, qint64 maxLineBytes, qsizetype alreadyScanned)
{
    const protocol::Frame frame = protocol::takeLine(buffer, maxLineBytes, alreadyScanned);
    RequestFrame out;
    out.consumed = frame.consumed;
    switch (frame.status) {
    case protocol::FrameStatus::Incomplete:
        out.kind = RequestFrame::Kind::NeedMore;
        out.scanned = frame.scanned;
        break;
    case protocol::FrameStatus::TooLong:
        out.kind = RequestFrame::Kind::TooLong;
        out.replyLine = protocol::reply::error(QByteArray("Line too long: the limit is ") +
                                               QByteArray::number(maxLineBytes) +
                                               " bytes; closing the connection");
        break;
    case protocol::FrameStatus::InvalidUtf8:
        out.kind = RequestFrame::Kind::Refused;
        out.replyLine = protocol::reply::error("Invalid UTF-8 in request line");
        break;
    case protocol::FrameStatus::Ok:
        out.kind = frame.line.trimmed().isEmpty() ? RequestFrame::Kind::Blank
                                                  : RequestFrame::Kind::Request;
        out.line = frame.line;
        break;
    }
    return out;
}

} // namespace cmq
