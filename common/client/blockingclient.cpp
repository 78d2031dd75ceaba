#include "client/blockingclient.h"

#include <QEventLoop>
#include <QPointer>
#include <QTimer>

#include "client/outboxstore.h"

namespace cmq::client {

namespace {

// Runs `loop` until something quits it or `timeoutMs` passes (negative: no limit). False when
// the time ran out.
bool run(QEventLoop &loop, int timeoutMs)
{
    QTimer timer;
    bool timedOut = false;
    if (timeoutMs >= 0) {
        timer.setSingleShot(true);
        QObject::connect(&timer, &QTimer::timeout, &loop, [&] {
            timedOut = true;
            loop.quit();
        });
        timer.start(timeoutMs);
    }
    loop.exec();
    return !timedOut;
}

} // namespace

BlockingClient::BlockingClient(ClientOptions options, std::unique_ptr<OutboxStore> outbox)
    : m_client(std::make_unique<Client>(std::move(options), std::move(outbox)))
{
}

BlockingClient::~BlockingClient()
{
    close(3000);
}

void BlockingClient::close(int timeoutMs)
{
    if (m_client->state() == ConnectionState::Stopped)
        return;
    QEventLoop loop;
    QObject::connect(m_client.get(), &Client::stopped, &loop, &QEventLoop::quit);
    m_client->shutdown(timeoutMs);
    if (m_client->state() != ConnectionState::Stopped)
        run(loop, timeoutMs + 1000);
    m_client->stop();
}

Status BlockingClient::connect(int timeoutMs)
{
    m_refused = false;
    if (m_client->state() == ConnectionState::Connected)
        return success();
    QEventLoop loop;
    QString lastError;
    QObject::connect(m_client.get(), &Client::connected, &loop, &QEventLoop::quit);
    QObject::connect(m_client.get(), &Client::connectionFailed, &loop,
                     [&](const QString &, const QString &error, bool refused) {
                         lastError = error;
                         if (refused) {
                             m_refused = true;
                             loop.quit();
                         }
                     });
    if (const Status started = m_client->start(); !started)
        return started;
    if (m_client->state() != ConnectionState::Connected)
        run(loop, timeoutMs);
    if (m_client->state() == ConnectionState::Connected)
        return success();
    if (m_refused)
        return failure(QStringLiteral("refused: %1").arg(lastError));
    return failure(
        QStringLiteral("no broker reachable within %1 ms%2")
            .arg(timeoutMs)
            .arg(lastError.isEmpty() ? QString() : QStringLiteral(" (") + lastError + u')'));
}

Result<QString> BlockingClient::waitForDelivered(const std::function<Result<QString>()> &enqueue,
                                                 int timeoutMs)
{
    using R = Result<QString>;
    struct Seen
    {
        MessageState state = MessageState::Queued;
        QString detail;
    };
    QHash<QString, Seen> seen;
    QString id;
    QEventLoop loop;
    const auto isFinal = [](MessageState state) {
        return state == MessageState::Delivered || state == MessageState::Failed ||
               state == MessageState::Cancelled;
    };
    QObject::connect(m_client.get(), &Client::messageStateChanged, &loop,
                     [&](const QString &messageId, MessageState state, const QString &detail) {
                         Seen &entry = seen[messageId];
                         entry.state = state;
                         if (!detail.isEmpty())
                             entry.detail = detail;
                         if (messageId == id && isFinal(state))
                             loop.quit();
                     });
    const R queued = enqueue();
    if (!queued)
        return queued;
    id = queued.value();
    if (!isFinal(seen.value(id).state))
        run(loop, timeoutMs);
    const Seen result = seen.value(id);
    switch (result.state) {
    case MessageState::Delivered:
        return id;
    case MessageState::Failed:
    case MessageState::Cancelled:
        return R::failure(QStringLiteral("%1 was refused: %2").arg(id, result.detail));
    default:
        return R::failure(
            QStringLiteral("%1 not delivered within %2 ms%3")
                .arg(id)
                .arg(timeoutMs)
                .arg(result.detail.isEmpty() ? QString() : QStringLiteral(": ") + result.detail));
    }
}

Result<QString> BlockingClient::send(const QString &to, const QByteArray &payload, int timeoutMs,
                                     const SendOptions &options)
{
    return waitForDelivered([&] { return m_client->send(to, payload, options); }, timeoutMs);
}

Result<QString> BlockingClient::publishEnvelope(const QString &exchange, const QString &routingKey,
                                                const QByteArray &envelopeJson, int timeoutMs)
{
    return waitForDelivered(
        [&] { return m_client->publishEnvelope(exchange, routingKey, envelopeJson); }, timeoutMs);
}

Status BlockingClient::waitForOutbox(int timeoutMs)
{
    if (m_client->pendingCount() == 0)
        return success();
    QEventLoop loop;
    QString lastDetail;
    QObject::connect(m_client.get(), &Client::outboxDrained, &loop, &QEventLoop::quit);
    QObject::connect(m_client.get(), &Client::messageStateChanged, &loop,
                     [&](const QString &id, MessageState, const QString &detail) {
                         if (!detail.isEmpty())
                             lastDetail = id + QStringLiteral(": ") + detail;
                     });
    run(loop, timeoutMs);
    if (m_client->pendingCount() == 0)
        return success();
    return failure(
        QStringLiteral("%1 message(s) not delivered within %2 ms%3")
            .arg(m_client->pendingCount())
            .arg(timeoutMs)
            .arg(lastDetail.isEmpty() ? QString() : QStringLiteral(" (") + lastDetail + u')'));
}

Result<QByteArray> BlockingClient::request(const QString &to, const QByteArray &payload,
                                           int timeoutMs)
{
    using R = Result<QByteArray>;
    // Shared with the callback, which the client may call after we have given up waiting.
    struct State
    {
        std::optional<R> result;
        QPointer<QEventLoop> loop;
    };
    auto state = std::make_shared<State>();
    QEventLoop loop;
    state->loop = &loop;
    const auto sent = m_client->request(to, payload, timeoutMs, [state](const R &reply) {
        state->result = reply;
        if (state->loop)
            state->loop->quit();
    });
    if (!sent)
        return R::failure(sent.error());
    // The client ends the request at timeoutMs itself; the margin only guards against a stall.
    if (!state->result)
        run(loop, timeoutMs + 5000);
    state->loop = nullptr;
    if (!state->result)
        return R::failure(QStringLiteral("no reply from %1 within %2 ms").arg(to).arg(timeoutMs));
    return *state->result;
}

Result<QByteArray> BlockingClient::waitForReply(const ReplyStarter &start,
                                                const QByteArray &expected, int timeoutMs)
{
    using R = Result<QByteArray>;
    struct State
    {
        std::optional<R> result;
        QPointer<QEventLoop> loop;
    };
    auto state = std::make_shared<State>();
    QEventLoop loop;
    state->loop = &loop;
    start([state](const R &reply) {
        state->result = reply;
        if (state->loop)
            state->loop->quit();
    });
    if (!state->result)
        run(loop, timeoutMs);
    state->loop = nullptr;
    if (!state->result)
        return R::failure(QStringLiteral("no reply within %1 ms").arg(timeoutMs));
    if (!state->result->ok())
        return *state->result;
    if (!state->result->value().startsWith(expected))
        return R::failure(QString::fromUtf8(state->result->value()));
    return *state->result;
}

Result<QByteArray> BlockingClient::declareExchange(const QString &exchange, int timeoutMs)
{
    return waitForReply(
        [&](Client::ReplyCallback done) { m_client->declareExchange(exchange, std::move(done)); },
        "Exchange declared", timeoutMs);
}

Result<QByteArray> BlockingClient::declareQueue(const QString &queue, int timeoutMs)
{
    return waitForReply(
        [&](Client::ReplyCallback done) { m_client->declareQueue(queue, std::move(done)); },
        "Queue declared", timeoutMs);
}

Result<QByteArray> BlockingClient::bindQueue(const QString &queue, const QString &exchange,
                                             const QString &routingKey, int timeoutMs)
{
    return waitForReply(
        [&](Client::ReplyCallback done) {
            m_client->bindQueue(queue, exchange, routingKey, std::move(done));
        },
        "Queue bound", timeoutMs);
}

Result<int> BlockingClient::serve(Client::Handler handler, int maxMessages, int timeoutMs)
{
    using R = Result<int>;
    // Shared with the handler the client keeps after we return.
    struct State
    {
        int handled = 0;
        QPointer<QEventLoop> loop;
        Client *client = nullptr;
    };
    if (m_client->state() == ConnectionState::Stopped)
        return R::failure(QStringLiteral("not connected: call connect() first"));
    auto state = std::make_shared<State>();
    QEventLoop loop;
    state->loop = &loop;
    state->client = m_client.get();
    m_serving = &loop;

    QString refusal;
    bool subscribed = false;
    QObject::connect(m_client.get(), &Client::subscribed, &loop, [&] { subscribed = true; });
    QObject::connect(m_client.get(), &Client::errorOccurred, &loop, [&](const QString &error) {
        if (!subscribed) {
            refusal = error;
            loop.quit();
        }
    });
    const auto wrapped = [state, handler, maxMessages](const IncomingMessage &message) {
        std::optional<QByteArray> reply;
        if (handler)
            reply = handler(message);
        ++state->handled;
        if (maxMessages > 0 && state->handled >= maxMessages && state->loop) {
            // Anything after the last wanted message stays unacknowledged for someone else.
            state->client->setListeningPaused(true);
            state->loop->quit();
        }
        return reply;
    };
    m_client->setListeningPaused(false);
    if (const Status listening = m_client->listen(wrapped); !listening) {
        m_serving = nullptr;
        return R::failure(listening.error());
    }
    run(loop, timeoutMs);
    m_serving = nullptr;
    state->loop = nullptr;
    m_client->setListeningPaused(true);
    if (!refusal.isEmpty())
        return R::failure(refusal);
    return state->handled;
}

void BlockingClient::stopServing()
{
    if (m_serving) {
        m_client->setListeningPaused(true);
        m_serving->quit();
    }
}

} // namespace cmq::client
