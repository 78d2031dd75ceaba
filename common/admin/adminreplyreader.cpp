#include "admin/adminreplyreader.h"

#include "protocol/lineframer.h"

namespace cmq::admin {

void AdminReplyReader::reset()
{
    m_buffer.clear();
    m_pending.clear();
    m_inMetrics = false;
    m_metrics.clear();
}

QList<AdminMessage> AdminReplyReader::feed(QByteArrayView bytes)
{
    QList<AdminMessage> out;
    m_buffer.append(bytes);
    qsizetype offset = 0;
    for (;;) {
        const protocol::Frame frame =
            protocol::takeLine(QByteArrayView(m_buffer).sliced(offset), MaxLineBytes);
        if (frame.status == protocol::FrameStatus::Incomplete)
            break;
        if (frame.status == protocol::FrameStatus::TooLong) {
            out.append(AdminMessage{AdminMessage::Kind::Malformed, AdminCommand::Unknown, true,
                                    "reply line over the size limit"});
            m_buffer.clear();
            return out;
        }
        offset += frame.consumed;
        if (frame.status == protocol::FrameStatus::InvalidUtf8) {
            out.append(AdminMessage{AdminMessage::Kind::Malformed, AdminCommand::Unknown, true,
                                    "reply line is not valid UTF-8"});
            continue;
        }
        handleLine(frame.line, out);
    }
    m_buffer.remove(0, offset);
    return out;
}

void AdminReplyReader::handleLine(QByteArrayView line, QList<AdminMessage> &out)
{
    using Kind = AdminMessage::Kind;
    if (m_inMetrics) {
        // Inside the metrics text nothing else is interleaved (the broker writes it whole).
        m_metrics.append(line);
        m_metrics.append('\n');
        if (line == "# EOF") {
            m_inMetrics = false;
            out.append(AdminMessage{Kind::Reply, AdminCommand::Metrics, false,
                                    std::exchange(m_metrics, {})});
        }
        return;
    }
    if (line.startsWith("Snapshot: ")) {
        out.append(AdminMessage{Kind::Snapshot, AdminCommand::Watch, false,
                                line.sliced(10).toByteArray()});
        return;
    }
    if (line.startsWith("Notice: ")) {
        out.append(
            AdminMessage{Kind::Notice, AdminCommand::Unknown, false, line.sliced(8).toByteArray()});
        return;
    }
    const bool isError = line.startsWith("Error: ");
    if (m_pending.empty()) {
        out.append(AdminMessage{isError ? Kind::Unsolicited : Kind::Malformed,
                                AdminCommand::Unknown, isError,
                                isError ? line.sliced(7).toByteArray() : line.toByteArray()});
        return;
    }
    const AdminCommand command = m_pending.front();
    if (command == AdminCommand::Metrics && !isError) {
        m_inMetrics = true;
        m_pending.pop_front();
        m_metrics = line.toByteArray() + '\n';
        if (line == "# EOF") { // an empty registry: the terminator alone
            m_inMetrics = false;
            out.append(AdminMessage{Kind::Reply, command, false, std::exchange(m_metrics, {})});
        }
        return;
    }
    m_pending.pop_front();
    out.append(AdminMessage{Kind::Reply, command, isError,
                            isError ? line.sliced(7).toByteArray() : line.toByteArray()});
}

} // namespace cmq::admin
