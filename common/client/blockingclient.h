#pragma once
// A Client for scripts and the command line: every call runs the event loop until its result is
// in or its time is up. Needs a QCoreApplication; not for use inside another Client's handler.

#include <memory>

#include <QString>

QT_FORWARD_DECLARE_CLASS(QEventLoop)

#include "client/client.h"

namespace cmq::client {

class BlockingClient final
{
public:
    explicit BlockingClient(ClientOptions options, std::unique_ptr<OutboxStore> outbox = {});
    // Closes cleanly (close(3000)) if still connected.
    ~BlockingClient();
    BlockingClient(const BlockingClient &) = delete;
    BlockingClient &operator=(const BlockingClient &) = delete;

    Client &client() { return *m_client; }

    // Starts the client and waits until a broker accepted us. Gives up early when a broker
    // refused our identity (refusedByBroker() then says so).
    Status connect(int timeoutMs);
    bool refusedByBroker() const { return m_refused; }

    // Sends and waits for the broker's ACK (MessageState::Delivered). On timeout the message is
    // still in the outbox; with an on-disk outbox it is resent by the next run.
    Result<QString> send(const QString &to, const QByteArray &payload, int timeoutMs,
                         const SendOptions &options = {});
    Result<QString> publishEnvelope(const QString &exchange, const QString &routingKey,
                                    const QByteArray &envelopeJson, int timeoutMs);
    // Waits until the outbox is empty (everything delivered, or refused for good).
    Status waitForOutbox(int timeoutMs);

    Result<QByteArray> request(const QString &to, const QByteArray &payload, int timeoutMs);

    // The broker's reply line; failure when it is not the success reply or does not come.
    Result<QByteArray> declareExchange(const QString &exchange, int timeoutMs);
    Result<QByteArray> declareQueue(const QString &queue, int timeoutMs);
    Result<QByteArray> bindQueue(const QString &queue, const QString &exchange,
                                 const QString &routingKey, int timeoutMs);

    // After connect(): listens and hands messages (and requests) to `handler` until `maxMessages`
    // were handled (0: no limit), stopServing() is called, or `timeoutMs` passed (negative: no
    // limit). Returns how many messages were handled. Fails when the subscription is refused.
    Result<int> serve(Client::Handler handler, int maxMessages, int timeoutMs);
    void stopServing();

    // Client::shutdown() and waits for it: the acks of handled messages and the answers to
    // written publishes arrive before the connection closes, so nothing handled is redelivered.
    void close(int timeoutMs);

private:
    using ReplyStarter = std::function<void(Client::ReplyCallback)>;
    Result<QByteArray> waitForReply(const ReplyStarter &start, const QByteArray &expected,
                                    int timeoutMs);
    Result<QString> waitForDelivered(const std::function<Result<QString>()> &enqueue,
                                     int timeoutMs);

    std::unique_ptr<Client> m_client;
    bool m_refused = false;
    QEventLoop *m_serving = nullptr;
};

} // namespace cmq::client
