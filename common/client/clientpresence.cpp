// Client: presence (watchPresence, presenceChanged), beside client.cpp.

#include "client/client.h"
#include "client/clientlog.h"
#include "protocol/replyreader.h"

namespace cmq::client {

void Client::watchPresence(bool on)
{
    if (on == m_watchingPresence)
        return;
    m_watchingPresence = on;
    // A step like the subscriptions: sent again after every reconnect, and the broker answers
    // it with who is online now.
    m_steps.removeIf([](const TopologyStep &step) { return step.line.startsWith("presence "); });
    addStep(on ? "presence on" : "presence off", on ? "Presence on" : "Presence off", {});
    if (!on)
        m_steps.removeIf([](const TopologyStep &step) { return step.line == "presence off"; });
}

void Client::onPresenceLine(const QByteArray &line)
{
    // "Presence: <cn> online|offline"
    const QByteArrayView text = protocol::readReply(line).text;
    const qsizetype space = text.lastIndexOf(' ');
    const QByteArrayView state = space < 0 ? QByteArrayView() : text.sliced(space + 1);
    if (space <= 0 || (state != "online" && state != "offline")) {
        qCWarning(lcClient, "%s: malformed presence line: %s", qPrintable(m_name),
                  line.left(200).constData());
        return;
    }
    Q_EMIT presenceChanged(QString::fromUtf8(text.first(space)), state == "online");
}

} // namespace cmq::client
