#include "client/client.h"

#include <algorithm>

#include "client/brokerconnection.h"
#include "client/clientlog.h"
#include "client/memoryoutbox.h"
#include "client/publisher.h"
#include "client/requesttracker.h"
#include "client/subscriber.h"
#include "crypto/envelopecrypto.h"
#include "protocol/replyreader.h"
#include "protocol/request.h"
#include "tls/tlsidentity.h"

namespace cmq::client {

namespace {

// A connection that dies sooner than this after being accepted does not reset the backoff, so a
// broker that accepts and drops us at once is not hammered.
constexpr int StableConnectionMs = 2000;
// After the shutdown notice the broker still sends the replies it owes; we wait this long.
constexpr int ShutdownDrainMs = 3000;

bool isValidName(const QString &name)
{
    return protocol::isValidName(name.toUtf8());
}

constexpr QByteArrayView WithMeta = " with-meta";

// A broker from before delivery metadata reads "consume <queue> with-meta" as one queue name with
// a space in it and refuses it so (docs/CLIENT.md).
bool refusesWithMeta(const QByteArray &line, const QByteArray &reply)
{
    return line.startsWith("consume ") && line.endsWith(WithMeta) &&
           protocol::readReply(reply).isError("Invalid queue name");
}

} // namespace

Client::Client(ClientOptions options, std::unique_ptr<OutboxStore> outbox, QObject *parent)
    : QObject(parent), m_options(std::move(options)),
      m_outbox(outbox ? std::move(outbox) : std::make_unique<MemoryOutbox>()),
      m_backoff(m_options.backoffInitialMs, m_options.backoffMaxMs)
{
    qRegisterMetaType<cmq::client::MessageState>();
    qRegisterMetaType<cmq::client::IncomingMessage>();
    qRegisterMetaType<cmq::client::ConnectionState>();

    m_reconnectTimer.setSingleShot(true);
    connect(&m_reconnectTimer, &QTimer::timeout, this, &Client::tryConnect);
    m_shutdownTimer.setSingleShot(true);
    connect(&m_shutdownTimer, &QTimer::timeout, this, &Client::finishShutdown);

    m_publisher = new Publisher(*m_outbox, m_options.publishWindow, m_options.retryDelayMs, this);
    m_publisher->setPadding(m_options.padPayloads ? crypto::Padding::Buckets
                                                  : crypto::Padding::None);
    m_subscriber = new Subscriber(m_options.dedupeCapacity, this);
    m_requests = new RequestTracker(this);

    connect(m_publisher, &Publisher::stateChanged, this,
            [this](const QString &id, MessageState state, const QString &detail) {
                Q_EMIT messageStateChanged(id, state, detail);
                if (state == MessageState::Failed)
                    m_requests->failByMessageId(id, detail);
            });
    connect(m_publisher, &Publisher::drained, this, &Client::outboxDrained);
    connect(m_subscriber, &Subscriber::rejected, this, &Client::messageRejected);
    connect(m_requests, &RequestTracker::timedOut, this,
            [this](const QString &id) { m_publisher->cancel(id); });
    m_subscriber->setDeliver([this](const IncomingMessage &message) { deliver(message); });
}

Client::~Client()
{
    // A dying client reports nothing: the application's slots may be gone already.
    const QSignalBlocker quiet(this);
    stop();
}

Status Client::start()
{
    if (m_started)
        return success();
    if (m_options.brokers.isEmpty())
        return failure(QStringLiteral("no broker address configured"));
    const auto tls = tls::clientConfiguration(m_options.tls);
    if (!tls)
        return failure(tls.error());
    m_tls = tls.value();
    m_name = m_options.name.isEmpty() ? tls::commonName(m_tls.localCertificate()) : m_options.name;
    if (m_name.isEmpty())
        return failure(QStringLiteral("the client certificate has no Common Name; give a name"));
    if (!isValidName(m_name))
        return failure(QStringLiteral("'%1' cannot be used as a client name").arg(m_name));
    if (!m_options.keyPairPath.isEmpty()) {
        auto keys = crypto::loadKeyPair(m_options.keyPairPath);
        if (!keys)
            return failure(keys.error());
        m_keys = keys.value();
        m_subscriber->setKeyPair(keys.value());
    }
    if (const Status loaded = m_publisher->load(); !loaded)
        return failure(QStringLiteral("cannot read the outbox: %1").arg(loaded.error()));
    m_started = true;
    if (m_listenRequested) {
        if (const Status listening = ensureListening(); !listening) {
            m_started = false;
            return listening;
        }
    }
    m_brokerIndex = 0;
    m_failuresThisRound = 0;
    m_backoff.reset();
    setState(ConnectionState::Connecting);
    tryConnect();
    return success();
}

void Client::shutdown(int timeoutMs)
{
    if (m_shuttingDown)
        return;
    m_shuttingDown = true;
    // No new deliveries reach the handler (held ones are redelivered to the next consumer) and
    // no new publishes go out; what is on the wire gets its answer.
    m_subscriber->setPaused(true);
    m_publisher->detach();
    m_reconnectTimer.stop();
    if (!m_connection || !m_connection->isReady() || isSettled()) {
        QMetaObject::invokeMethod(this, &Client::finishShutdown, Qt::QueuedConnection);
        return;
    }
    // Acks the rate limit refused are not on the wire while they wait to go again: the
    // connection may fall idle before they are confirmed.
    connect(m_connection, &BrokerConnection::idle, this, &Client::finishShutdownWhenSettled,
            Qt::UniqueConnection);
    connect(m_subscriber, &Subscriber::acksSettled, this, &Client::finishShutdownWhenSettled,
            Qt::UniqueConnection);
    m_shutdownTimer.start(timeoutMs);
}

bool Client::isSettled() const
{
    return m_connection->pendingReplies() == 0 && m_subscriber->unsettledAcks() == 0;
}

void Client::finishShutdownWhenSettled()
{
    if (m_shuttingDown && (!m_connection || isSettled()))
        finishShutdown();
}

void Client::finishShutdown()
{
    if (!m_shuttingDown)
        return;
    m_shuttingDown = false;
    m_shutdownTimer.stop();
    stop();
    m_subscriber->setPaused(false);
    Q_EMIT stopped();
}

void Client::stop()
{
    m_started = false;
    m_reconnectTimer.stop();
    if (BrokerConnection *connection = std::exchange(m_connection, nullptr)) {
        m_publisher->detach();
        m_subscriber->detach();
        connection->disconnect(this);
        connection->abort(QStringLiteral("stopped"));
        connection->deleteLater();
    }
    setState(ConnectionState::Stopped);
}

QString Client::currentBroker() const
{
    if (m_state != ConnectionState::Connected || !m_connection)
        return {};
    return m_connection->address().toString();
}

void Client::setState(ConnectionState state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void Client::tryConnect()
{
    if (!m_started)
        return;
    const BrokerAddress address = m_options.brokers.at(m_brokerIndex);
    auto *connection = new BrokerConnection(address, m_tls, m_options.heartbeatSec,
                                            m_options.connectTimeoutMs, this);
    m_connection = connection;
    ++m_connectionGeneration;
    connect(connection, &BrokerConnection::ready, this,
            [this, connection] { onReady(connection); });
    connect(connection, &BrokerConnection::lost, this,
            [this, connection](const QString &reason, bool refused) {
                onLost(connection, reason, refused);
            });
    connect(connection, &BrokerConnection::pushed, this,
            [this, connection](const QByteArray &line) {
                if (connection != m_connection)
                    return;
                if (line.startsWith("Presence: "))
                    onPresenceLine(line);
                else
                    m_subscriber->handlePush(line);
            });
    connect(connection, &BrokerConnection::shutdownNotice, this,
            [this, connection] { onShutdownNotice(connection); });
    qCDebug(lcClient, "%s: connecting to %s", qPrintable(m_name), qPrintable(address.toString()));
    connection->open();
}

void Client::connectNext()
{
    m_brokerIndex = (m_brokerIndex + 1) % int(m_options.brokers.size());
    if (m_failuresThisRound < m_options.brokers.size()) {
        m_reconnectTimer.start(0);
        return;
    }
    // Every address failed once: pause before the next round.
    m_failuresThisRound = 0;
    const int delay = m_backoff.nextDelayMs();
    qCDebug(lcClient, "%s: no broker reachable, next round in %d ms", qPrintable(m_name), delay);
    m_reconnectTimer.start(delay);
}

void Client::onReady(BrokerConnection *connection)
{
    if (connection != m_connection)
        return;
    m_failuresThisRound = 0;
    m_connectedSince.start();
    const QString broker = connection->address().toString();
    qCInfo(lcClient, "%s: connected to %s", qPrintable(m_name), qPrintable(broker));
    setState(ConnectionState::Connected);
    Q_EMIT connected(broker);
    m_subscriber->attach(connection);
    m_stepQueue = m_steps;
    m_stepInFlight = false;
    m_publisherAttached = false;
    runNextStep();
}

void Client::runNextStep()
{
    // One step at a time, each after the previous one's reply, as the existing clients do, so
    // a refused step is known before the steps that depend on it are sent.
    if (m_stepInFlight || !m_connection || !m_connection->isReady())
        return;
    if (m_stepQueue.isEmpty()) {
        if (!m_publisherAttached) {
            // Our topology is in place (a reply to a request of ours has a queue to go to):
            // now the outbox.
            m_publisherAttached = true;
            m_publisher->attach(m_connection);
        }
        return;
    }
    const TopologyStep step = m_stepQueue.takeFirst();
    m_stepInFlight = true;
    const quint64 generation = m_connectionGeneration;
    m_connection->request(step.line, [this, step, generation](const Result<QByteArray> &reply) {
        // A late answer from a connection we already left (a lost one answers nothing) must not
        // drive the new one's steps; the new connection replays everything anyway.
        if (!reply || generation != m_connectionGeneration)
            return;
        m_stepInFlight = false;
        if (refusesWithMeta(step.line, reply.value())) {
            // Consume it the old way on this connection: messages come without attestation.
            qCInfo(lcClient, "%s: the broker has no delivery metadata; consuming without it",
                   qPrintable(m_name));
            m_stepQueue.prepend(
                TopologyStep{step.line.chopped(WithMeta.size()), step.expectedReply});
            m_stepCallbacks.remove(step.line);
            runNextStep();
            return;
        }
        const QList<ReplyCallback> callbacks = m_stepCallbacks.values(step.line);
        m_stepCallbacks.remove(step.line);
        if (!reply->startsWith(step.expectedReply)) {
            qCWarning(lcClient, "%s: %s: %s", qPrintable(m_name), step.line.left(100).constData(),
                      reply->constData());
            Q_EMIT errorOccurred(QStringLiteral("%1: %2").arg(
                QString::fromUtf8(step.line.left(100)), QString::fromUtf8(reply.value())));
        } else if (step.line.startsWith("consume ")) {
            QByteArray queue = step.line.mid(8);
            if (queue.endsWith(WithMeta))
                queue.chop(WithMeta.size());
            Q_EMIT subscribed(QString::fromUtf8(queue));
        }
        for (const ReplyCallback &callback : callbacks)
            callback(reply);
        runNextStep();
    });
}

void Client::onLost(BrokerConnection *connection, const QString &reason, bool refused)
{
    connection->deleteLater();
    if (connection != m_connection)
        return; // a connection we had already left (after a shutdown notice)
    m_connection = nullptr;
    m_publisher->detach();
    m_subscriber->detach();
    if (m_shuttingDown) {
        finishShutdown();
        return;
    }
    if (!m_started)
        return;
    const QString broker = connection->address().toString();
    if (m_state == ConnectionState::Connected) {
        qCWarning(lcClient, "%s: connection lost: %s", qPrintable(m_name), qPrintable(reason));
        setState(ConnectionState::Connecting);
        Q_EMIT disconnected(reason);
        if (m_connectedSince.elapsed() >= StableConnectionMs)
            m_backoff.reset();
        m_failuresThisRound = 0;
    } else {
        qCInfo(lcClient, "%s: cannot connect: %s", qPrintable(m_name), qPrintable(reason));
        Q_EMIT connectionFailed(broker, reason, refused);
        ++m_failuresThisRound;
    }
    connectNext();
}

void Client::onShutdownNotice(BrokerConnection *connection)
{
    if (connection != m_connection)
        return;
    if (m_shuttingDown) {
        finishShutdown();
        return;
    }
    qCInfo(lcClient, "%s: %s is shutting down, failing over", qPrintable(m_name),
           qPrintable(connection->address().toString()));
    // Leave it to finish the replies it owes (late ACKs still confirm messages) and move on.
    m_connection = nullptr;
    m_publisher->detach();
    m_subscriber->detach();
    connection->drain(ShutdownDrainMs);
    setState(ConnectionState::Connecting);
    Q_EMIT disconnected(QStringLiteral("the broker is shutting down"));
    m_failuresThisRound = 0;
    m_backoff.reset();
    connectNext();
}

Status Client::listen(Handler handler)
{
    m_handler = std::move(handler);
    if (!m_started) {
        m_listenRequested = true;
        return success();
    }
    return ensureListening();
}

void Client::setListeningPaused(bool paused)
{
    m_subscriber->setPaused(paused);
}

Status Client::ensureListening()
{
    if (m_listening)
        return success();
    if (!m_keys)
        return failure(QStringLiteral("receiving needs our X25519 key pair (keyPairPath; create "
                                      "one with 'cmq keygen')"));
    m_listening = true;
    const Conventions &names = m_options.conventions;
    const QByteArray queue = names.queueFor(m_name).toUtf8();
    const QByteArray exchange = names.exchange.toUtf8();
    addStep("register_public_key " + m_keys->publicKey.toBase64(), "Public key registered", {});
    addStep("declare_exchange " + exchange, "Exchange declared", {});
    addStep("declare_queue " + queue, "Queue declared", {});
    addStep("bind " + queue + ' ' + exchange + ' ' + names.routingKeyFor(m_name).toUtf8(),
            "Queue bound", {});
    addStep("qos " + QByteArray::number(m_options.prefetch), "Qos set to ", {});
    addStep("consume " + queue + (m_options.deliveryMeta ? WithMeta.toByteArray() : QByteArray()),
            "Subscribed to queue", {});
    return success();
}

void Client::declareExchange(const QString &exchange, ReplyCallback done)
{
    addStep("declare_exchange " + exchange.toUtf8(), "Exchange declared", std::move(done));
}

void Client::declareQueue(const QString &queue, ReplyCallback done)
{
    addStep("declare_queue " + queue.toUtf8(), "Queue declared", std::move(done));
}

void Client::bindQueue(const QString &queue, const QString &exchange, const QString &routingKey,
                       ReplyCallback done)
{
    addStep("bind " + queue.toUtf8() + ' ' + exchange.toUtf8() + ' ' + routingKey.toUtf8(),
            "Queue bound", std::move(done));
}

void Client::addStep(const QByteArray &line, const QByteArray &expectedReply, ReplyCallback done)
{
    const TopologyStep step{line, expectedReply};
    const bool known = std::any_of(m_steps.cbegin(), m_steps.cend(),
                                   [&](const TopologyStep &s) { return s.line == line; });
    if (!known)
        m_steps.append(step);
    if (done)
        m_stepCallbacks.insert(line, done);
    // Sent in turn after whatever steps are still going out (again, when a caller waits for a
    // reply to a known one).
    if (m_connection && m_connection->isReady() && (!known || done)) {
        m_stepQueue.append(step);
        runNextStep();
    }
}

} // namespace cmq::client
