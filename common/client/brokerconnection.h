#pragma once
// One mTLS connection to one broker, used once: connect, ask for heartbeats, then carry request
// lines whose replies come back in request order, with pushed lines (deliveries, pings, the
// shutdown notice) in between. It reports its end exactly once through lost(); the Client makes
// a new one for every attempt.

#include <functional>

#include <QByteArray>
#include <QElapsedTimer>
#include <QQueue>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTimer>

#include "client/brokeraddress.h"
#include "util/result.h"

namespace cmq::client {

class BrokerConnection final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(BrokerConnection)

public:
    // The reply line (without "\n"), or a failure when the connection ends before it arrives.
    using ReplyHandler = std::function<void(const Result<QByteArray> &reply)>;

    BrokerConnection(const BrokerAddress &address, const QSslConfiguration &tls, int heartbeatSec,
                     int connectTimeoutMs, QObject *parent = nullptr);
    ~BrokerConnection() override;

    void open();
    // Ready once the broker answered our first request: a TLS handshake alone proves nothing,
    // because with TLS 1.3 the broker may still refuse our certificate right after it.
    bool isReady() const { return m_state == State::Ready; }
    bool isOpen() const { return m_state == State::Connecting || m_state == State::Ready; }
    const BrokerAddress &address() const { return m_address; }

    // Sends one request line (without "\n"). On a connection that is not open the handler is
    // called at once with a failure.
    void request(const QByteArray &line, ReplyHandler handler);
    // Ends the connection now; lost() follows with `reason`.
    void abort(const QString &reason);
    // Requests written and not answered yet.
    int pendingReplies() const { return int(m_pending.size()); }
    // After the shutdown notice: the broker reads nothing more, but still sends the replies it
    // owes; wait for them at most `ms`, then end.
    void drain(int ms);

Q_SIGNALS:
    void ready();
    // "Message: ...", "Redelivered: ...", "Meta: ..." and "Presence: ..."
    void pushed(const QByteArray &line);
    void shutdownNotice();
    void idle(); // the last unanswered request was answered
    // The connection is over (never established, refused, silent, closed). `refused` when the
    // broker turned our identity away rather than being unreachable.
    void lost(const QString &reason, bool refused);

private:
    enum class State { Idle, Connecting, Ready, Closed };

    void onEncrypted();
    void onReadyRead();
    void onSocketError(QAbstractSocket::SocketError error);
    void onWatchdog();
    void handleLine(const QByteArray &line);
    void finish(const QString &why, bool refused);

    BrokerAddress m_address;
    int m_heartbeatSec;
    int m_connectTimeoutMs;
    QSslSocket m_socket;
    State m_state = State::Idle;
    QByteArray m_buffer;
    qsizetype m_scanned = 0; // bytes at the front of m_buffer known to hold no "\n"
    QQueue<ReplyHandler> m_pending;
    QElapsedTimer m_sinceHeard;
    QTimer m_watchdog;
    QTimer m_deadline; // connect timeout, then the drain limit
    QByteArray m_lastUnsolicitedError;
    bool m_draining = false;
};

} // namespace cmq::client
