#pragma once
// The CipherMQ client: services address each other by name, every message is end-to-end
// encrypted for its receiver, and delivery is at least once through broker failures, failover
// and restarts of the sending process (with an on-disk outbox). Asynchronous, one thread, Qt
// signals; BlockingClient wraps it for scripts and the command line. See docs/CLIENT.md.

#include <functional>
#include <memory>
#include <optional>

#include <QElapsedTimer>
#include <QJsonObject>
#include <QList>
#include <QMultiHash>
#include <QObject>
#include <QSslConfiguration>
#include <QTimer>

#include "client/backoff.h"
#include "client/clientoptions.h"
#include "client/incomingmessage.h"
#include "client/messagestate.h"
#include "client/outboxstore.h"
#include "crypto/keypair.h"
#include "util/result.h"

namespace cmq::client {

class BrokerConnection;
class Publisher;
class RequestTracker;
class Subscriber;

enum class ConnectionState {
    Stopped,    // before start() or after stop()
    Connecting, // trying the broker list (or pausing between rounds)
    Connected,  // a broker accepted us; topology and subscriptions are replayed
};

struct SendOptions
{
    // Empty: "{me}-{uuid}-{to}". An application that replays its own work after a crash can pass
    // the same id again: the outbox or the broker recognises it and it is delivered once.
    QString messageId;
    QJsonObject extraFields; // extra envelope fields, forwarded untouched by the broker
};

class Client final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Client)

public:
    // Handles one received message; for a request, the value returned is sent back to the
    // requester (std::nullopt: no reply). The message is acknowledged when it returns.
    using Handler = std::function<std::optional<QByteArray>(const IncomingMessage &message)>;
    // The broker's reply line to a topology command, or why there is none.
    using ReplyCallback = std::function<void(const Result<QByteArray> &reply)>;
    using RequestCallback = std::function<void(const Result<QByteArray> &reply)>;

    // Without an outbox store the messages are kept in memory (MemoryOutbox).
    explicit Client(ClientOptions options, std::unique_ptr<OutboxStore> outbox = {},
                    QObject *parent = nullptr);
    ~Client() override;

    // Loads the TLS identity, our key pair (when configured) and whatever the outbox holds, then
    // connects in the background. Fails on configuration errors only; unreachable brokers are
    // retried forever (watch stateChanged / connectionFailed).
    Status start();
    // Ends the connection at once: acks and publishes written but not answered may be lost (the
    // broker redelivers; the outbox resends).
    void stop();
    // Ends it cleanly: takes no more messages, lets the broker answer what was sent (acks,
    // publishes) for at most timeoutMs, then stops and emits stopped().
    void shutdown(int timeoutMs = 5000);

    ConnectionState state() const { return m_state; }
    QString name() const { return m_name; }
    // The broker we are connected to; empty when not connected.
    QString currentBroker() const;
    const ClientOptions &options() const { return m_options; }

    // Encrypts `payload` for `to` and publishes it on the naming conventions. Returns the message
    // id at once; the message is in the outbox and follows through messageStateChanged.
    Result<QString> send(const QString &to, const QByteArray &payload,
                         const SendOptions &options = {});
    // Publishes an envelope that is already sealed (its message_id is taken from it), through
    // the outbox like any other message.
    Result<QString> publishEnvelope(const QString &exchange, const QString &routingKey,
                                    const QByteArray &envelopeJson);

    // Registers our public key, declares and binds our queue and consumes it, now and after every
    // reconnect. `handler` may be empty: messages are then only emitted as messageReceived.
    Status listen(Handler handler = {});
    bool isListening() const { return m_listening; }
    // Holds further deliveries unacknowledged (and away from the handler) until resumed.
    void setListeningPaused(bool paused);

    // Sends `payload` to `to` as a request and calls `done` once with its reply or an error
    // (timeout, refused). Listens first if needed: replies come to our own queue, so our CN
    // must be both a sender and a receiver. Returns the request's message id.
    Result<QString> request(const QString &to, const QByteArray &payload, int timeoutMs,
                            RequestCallback done);

    // Topology of our own, declared now (when connected) and again after every reconnect.
    // `done` receives the broker's reply to the first declaration.
    void declareExchange(const QString &exchange, ReplyCallback done = {});
    void declareQueue(const QString &queue, ReplyCallback done = {});
    void bindQueue(const QString &queue, const QString &exchange, const QString &routingKey,
                   ReplyCallback done = {});

    // Be told (presenceChanged) when the identities our presence groups let us see connect and
    // leave; kept up after every reconnect and failover, which report the online ones again.
    void watchPresence(bool on = true);
    bool isWatchingPresence() const { return m_watchingPresence; }

    // Messages in the outbox (not yet confirmed by the broker).
    int pendingCount() const;
    // Redeliveries dropped because their id had been handled already.
    int duplicatesDropped() const;

Q_SIGNALS:
    void stateChanged(cmq::client::ConnectionState state);
    void connected(const QString &broker);
    void disconnected(const QString &reason);
    // One attempt failed; `refused` when the broker rejected our identity.
    void connectionFailed(const QString &broker, const QString &error, bool refused);
    void messageStateChanged(const QString &messageId, cmq::client::MessageState state,
                             const QString &detail);
    void messageReceived(const cmq::client::IncomingMessage &message);
    void messageRejected(const QString &messageId, const QString &error);
    void subscribed(const QString &queue);
    // "Presence: <cn> online|offline" from the broker (watchPresence()).
    void presenceChanged(const QString &cn, bool online);
    void outboxDrained();
    void stopped(); // after shutdown()
    // A problem the application should hear about (a refused declaration, ...).
    void errorOccurred(const QString &error);

private:
    struct TopologyStep
    {
        QByteArray line;
        QByteArray expectedReply; // prefix of the success reply
    };

    void connectNext();
    void tryConnect();
    void onReady(BrokerConnection *connection);
    void onLost(BrokerConnection *connection, const QString &reason, bool refused);
    void onShutdownNotice(BrokerConnection *connection);
    void setState(ConnectionState state);
    void addStep(const QByteArray &line, const QByteArray &expectedReply, ReplyCallback done);
    void runNextStep();
    void deliver(const IncomingMessage &message);
    void onPresenceLine(const QByteArray &line);
    void finishShutdown();
    void finishShutdownWhenSettled();
    bool isSettled() const; // with a connection: no reply and no ack outstanding
    Status ensureListening();

    ClientOptions m_options;
    std::unique_ptr<OutboxStore> m_outbox;
    QString m_name;
    QSslConfiguration m_tls;
    std::optional<crypto::KeyPair> m_keys;
    ConnectionState m_state = ConnectionState::Stopped;
    bool m_started = false;
    BrokerConnection *m_connection = nullptr; // the current attempt or session
    quint64 m_connectionGeneration = 0;       // counts connection attempts
    int m_brokerIndex = 0;
    int m_failuresThisRound = 0;
    Backoff m_backoff;
    QTimer m_reconnectTimer;
    QTimer m_shutdownTimer;
    bool m_shuttingDown = false;
    Publisher *m_publisher = nullptr;
    Subscriber *m_subscriber = nullptr;
    RequestTracker *m_requests = nullptr;
    QList<TopologyStep> m_steps;
    QList<TopologyStep> m_stepQueue; // still to send on this connection, one at a time
    bool m_stepInFlight = false;
    bool m_publisherAttached = false; // after the first replay on this connection
    QMultiHash<QByteArray, ReplyCallback> m_stepCallbacks; // one-shot, by command line
    bool m_listening = false;
    bool m_watchingPresence = false;
    bool m_listenRequested = false; // listen() before start(): honoured by start()
    Handler m_handler;
    QElapsedTimer m_connectedSince;
};

} // namespace cmq::client

// The name the issue uses: CipherMQ::Client.
namespace CipherMQ = cmq::client;

Q_DECLARE_METATYPE(cmq::client::ConnectionState)
