#pragma once
// The client side of admin-protocol framing, without sockets: told which requests were sent,
// fed the bytes that arrive, it hands back whole messages — a reply (one JSON line, the
// Prometheus text up to "# EOF", or an error line), a watch snapshot or a notice.

#include <deque>

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

#include "admin/adminrequest.h"

namespace cmq::admin {

struct AdminMessage
{
    enum class Kind {
        Reply,       // the reply to the oldest outstanding request
        Snapshot,    // "Snapshot: <json>"; body is the JSON
        Notice,      // "Notice: <text>"; the broker is closing the connection
        Unsolicited, // an "Error: ..." line with no request outstanding: a refusal at connect
        Malformed,   // a line the protocol does not allow here (or one over the size limit)
    };
    Kind kind = Kind::Reply;
    AdminCommand command = AdminCommand::Unknown; // Reply: what it answers
    bool isError = false;                         // Reply/Unsolicited: an "Error: " line
    QByteArray body; // JSON; the metrics text with its "# EOF"; error/notice text without prefix
};

class AdminReplyReader
{
public:
    // Longest reply line accepted (the JSON of a broker with many connections is large).
    static constexpr qsizetype MaxLineBytes = 256LL << 20;

    // A request was written; its reply will be the next one to arrive.
    void expect(AdminCommand command) { m_pending.push_back(command); }
    qsizetype outstanding() const { return qsizetype(m_pending.size()); }

    QList<AdminMessage> feed(QByteArrayView bytes);
    void reset();

private:
    void handleLine(QByteArrayView line, QList<AdminMessage> &out);

    QByteArray m_buffer;
    std::deque<AdminCommand> m_pending;
    bool m_inMetrics = false;
    QByteArray m_metrics;
};

} // namespace cmq::admin
