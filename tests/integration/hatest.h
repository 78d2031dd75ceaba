#pragma once
// Shared by the high-availability tests (tst_34_cluster, tst_35_pg_failover,
// tst_36_partition): an envelope per id, the test queue's topology, draining a queue, and a
// publisher that streams with a window of outstanding publishes and keeps the history of what
// was ACKed and what was refused, across reconnects.

#include <QByteArray>
#include <QDeadlineTimer>
#include <QList>
#include <QSet>
#include <QtTest>

#include <functional>
#include <memory>
#include <utility>

#include "testclient.h"

namespace cmq::test {

// Where a node's data listener is: loopback, or an address in a test's network namespace.
struct HaNode
{
    HaNode(quint16 p) : port(p) {} // NOLINT: a loopback port is the usual node
    HaNode(QString a, quint16 p) : address(std::move(a)), port(p) {}
    QString address = QStringLiteral("127.0.0.1");
    quint16 port = 0;
    QByteArray text() const { return address.toLatin1() + ':' + QByteArray::number(port); }
};

inline bool haConnect(TestClient &client, const HaNode &node, int timeoutMs = 15000)
{
    return client.connectTo(node.address, node.port, timeoutMs);
}

inline QByteArray haEnvelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":")" +
           QByteArray(300, 'C') + R"("})";
}

// True when `port` serves the data path: a declare gets its normal reply.
inline bool haServes(const HaNode &node, const QByteArray &queue)
{
    TestClient client("receiver_1");
    if (!haConnect(client, node, 5000))
        return false;
    return client.request("declare_queue " + queue, 5000) == "Queue declared";
}

// The first line a new data connection gets without asking anything (a standby's redirect).
inline QByteArray haGreeting(const HaNode &node)
{
    TestClient client("receiver_1");
    if (!haConnect(client, node, 5000))
        return {};
    return client.readLine(5000);
}

inline QByteArray haRedirectTo(const HaNode &active)
{
    return "Error: Standby: the active node is " + active.text();
}

inline bool haDeclare(const HaNode &node, const QByteArray &queue)
{
    TestClient receiver("receiver_1");
    return haConnect(receiver, node) &&
           receiver.request("declare_queue " + queue) == "Queue declared" &&
           receiver.request("declare_exchange CipherMQ_exchange") == "Exchange declared" &&
           receiver.request("bind " + queue + " CipherMQ_exchange " + queue) == "Queue bound";
}

// Consumes, acking everything, until every id of `expected` has arrived (or `patienceMs` ran
// out) and then the queue stays quiet for `quietMs`; returns the ids received, and counts ids
// that came more than once in `*duplicates` (at-least-once delivery allows them).
inline QSet<QByteArray> haDrain(const HaNode &node, const QByteArray &queue,
                                const QSet<QByteArray> &expected = {}, int patienceMs = 60000,
                                int quietMs = 3000, int *duplicates = nullptr)
{
    TestClient receiver("receiver_1");
    if (!haConnect(receiver, node))
        return {};
    receiver.send("qos 0");
    receiver.send("consume " + queue);
    QSet<QByteArray> received;
    int again = 0;
    const QDeadlineTimer patience(patienceMs);
    for (;;) {
        const bool complete = (received & expected).size() == expected.size();
        const int wait = complete || patience.hasExpired()
                             ? quietMs
                             : int(qBound(qint64(1), patience.remainingTime(), qint64(5000)));
        const QByteArray line = receiver.readLine(wait);
        if (line.isNull()) {
            if (complete || patience.hasExpired() ||
                receiver.socket().state() != QAbstractSocket::ConnectedState)
                break;
            continue;
        }
        if (line.startsWith("Message: ")) {
            const QByteArray id = line.mid(9, line.indexOf(' ', 9) - 9);
            if (received.contains(id))
                ++again;
            received.insert(id);
            receiver.send("ack " + id);
        }
    }
    if (duplicates)
        *duplicates = again;
    return received;
}

// Streams publishes of ids "<prefix>-<n>" to one routing key, at most `window` unanswered at a
// time. Replies come in request order, so each "ACK <id>" or "Error: ..." answers the oldest
// unanswered publish; publishes unanswered when a connection ends are neither (their fate is
// unknown to the publisher, as for a real one). `nodes` are tried in turn on reconnect; a
// connection that answers nothing for `stallMs` (a cut link: no close ever arrives) is given up.
class HaPublisher
{
public:
    HaPublisher(QList<HaNode> nodes, QByteArray routingKey, QByteArray prefix, int window = 32,
                int stallMs = 5000)
        : m_nodes(std::move(nodes)), m_routingKey(std::move(routingKey)),
          m_prefix(std::move(prefix)), m_window(window), m_stallMs(stallMs)
    {
    }

    // Publishes and reads replies for up to `ms`, or until `until` (checked after each reply)
    // holds. Returns what `until` last said.
    bool pump(int ms, const std::function<bool()> &until = {})
    {
        const QDeadlineTimer deadline(ms);
        while (!deadline.hasExpired()) {
            if (until && until())
                return true;
            if (!m_client && !connect(int(qMin<qint64>(5000, deadline.remainingTime()))))
                continue;
            QByteArray burst;
            while (m_unanswered.size() < m_window) {
                const QByteArray id = m_prefix + '-' + QByteArray::number(m_next++);
                m_unanswered.append(id);
                burst += "publish CipherMQ_exchange " + m_routingKey + ' ' + haEnvelope(id) + '\n';
            }
            if (!burst.isEmpty())
                m_client->sendRaw(burst);
            const QByteArray line =
                m_client->readLine(int(qBound(qint64(1), deadline.remainingTime(), qint64(1000))));
            if (line.isNull()) {
                if (m_client->socket().state() != QAbstractSocket::ConnectedState ||
                    m_lastReply.hasExpired())
                    dropConnection();
                continue;
            }
            m_lastReply.setRemainingTime(m_stallMs);
            take(line);
        }
        return until && until();
    }

    const QSet<QByteArray> &acked() const { return m_acked; }
    const QSet<QByteArray> &refused() const { return m_refused; }
    // Sent but never answered: on connections that ended, and the window still open now.
    int unknown() const { return m_unknown + int(m_unanswered.size()); }
    int reconnects() const { return m_connects > 0 ? m_connects - 1 : 0; }
    int sent() const { return m_next; }

private:
    bool connect(int timeoutMs)
    {
        auto client = std::make_unique<TestClient>(QStringLiteral("sender_1"));
        const HaNode node = m_nodes.at(m_turn++ % m_nodes.size());
        if (!haConnect(*client, node, qMax(1, timeoutMs)))
            return false;
        m_client = std::move(client);
        m_lastReply.setRemainingTime(m_stallMs);
        ++m_connects;
        return true;
    }

    void dropConnection()
    {
        m_unknown += int(m_unanswered.size());
        m_unanswered.clear();
        m_client.reset();
    }

    void take(const QByteArray &line)
    {
        if (line.startsWith("Error: Standby:") || line == "Server shutting down")
            return dropConnection(); // the close follows; nothing was answered
        if (m_unanswered.isEmpty())
            return;
        if (line == "ACK " + m_unanswered.first())
            m_acked.insert(m_unanswered.takeFirst());
        else if (line.startsWith("Error:"))
            m_refused.insert(m_unanswered.takeFirst());
    }

    QList<HaNode> m_nodes;
    QByteArray m_routingKey, m_prefix;
    int m_window, m_stallMs;
    QDeadlineTimer m_lastReply;
    std::unique_ptr<TestClient> m_client;
    QList<QByteArray> m_unanswered;
    QSet<QByteArray> m_acked, m_refused;
    int m_unknown = 0, m_next = 0, m_turn = 0, m_connects = 0;
};

// Drains `queue` on `node` and compares with the publisher's history: logs the figures
// (`ackedBefore`: ACKs before the fault) and returns what is wrong, empty when every ACKed id
// was delivered and no refused one was.
inline QString haCheckDelivery(const HaPublisher &publisher, const HaNode &node,
                               const QByteArray &queue, qsizetype ackedBefore)
{
    int duplicates = 0;
    const QSet<QByteArray> received =
        haDrain(node, queue, publisher.acked(), 60000, 3000, &duplicates);
    const QSet<QByteArray> lost = publisher.acked() - received;
    const QSet<QByteArray> refusedButDelivered = publisher.refused() & received;
    qInfo("sent %d, ACKed %lld (%lld before the fault), refused %lld, unanswered %d, "
          "delivered %lld, duplicates %d, ACKed-but-lost %lld, refused-but-delivered %lld",
          publisher.sent(), qint64(publisher.acked().size()), qint64(ackedBefore),
          qint64(publisher.refused().size()), publisher.unknown(), qint64(received.size()),
          duplicates, qint64(lost.size()), qint64(refusedButDelivered.size()));
    if (!lost.isEmpty())
        return QStringLiteral("%1 ACKed messages lost, e.g. %2")
            .arg(lost.size())
            .arg(QString::fromUtf8(lost.values().value(0)));
    if (!refusedButDelivered.isEmpty())
        return QStringLiteral("%1 refused messages delivered, e.g. %2")
            .arg(refusedButDelivered.size())
            .arg(QString::fromUtf8(refusedButDelivered.values().value(0)));
    return {};
}

} // namespace cmq::test
