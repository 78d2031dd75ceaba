#pragma once
// The receiving half of a Client: turns pushed "Message:" lines into decrypted messages for the
// application, acknowledges each after the application has handled it, and drops redeliveries of
// messages it already handed over (the dedupe window).

#include <functional>

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QTimer>

#include "client/brokerconnection.h"
#include "client/dedupewindow.h"
#include "client/incomingmessage.h"
#include "crypto/keypair.h"

namespace cmq::client {

class Subscriber final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Subscriber)

public:
    // Called once per new message; the ack is sent when it returns.
    using Deliver = std::function<void(const IncomingMessage &message)>;

    explicit Subscriber(int dedupeCapacity, QObject *parent = nullptr);

    void setKeyPair(const crypto::KeyPair &keys) { m_keys = keys; }
    void setDeliver(Deliver deliver) { m_deliver = std::move(deliver); }
    void attach(BrokerConnection *connection);
    void detach();
    // A pushed line from the attached connection.
    void handlePush(const QByteArray &line);

    // While paused, deliveries are held unacknowledged (the application wants no more for now);
    // resuming hands them over. Held ones are dropped on detach: the broker redelivers them.
    void setPaused(bool paused);

    int duplicatesDropped() const { return m_duplicates; }
    // Acks (and drops) on the attached connection not confirmed yet: written and unanswered, or
    // refused by the broker's rate limit and waiting to be sent again.
    int unsettledAcks() const { return m_acksInFlight + int(m_ackRetry.size()); }

Q_SIGNALS:
    // A message that cannot be opened (not for our key, altered, malformed): it is dropped
    // from the queue, since no retry could ever open it.
    void rejected(const QString &messageId, const QString &error);
    // unsettledAcks() went down to 0.
    void acksSettled();

private:
    void acknowledge(const QByteArray &messageId);
    void handleMessage(const QByteArray &line);
    // Sends an "ack" or "nack ... drop" line; one the rate limit refuses is sent again later.
    // Until it is confirmed the broker counts its delivery against our prefetch, so giving up
    // on it would stop the deliveries once prefetch of them piled up.
    void settle(const QByteArray &line);
    void writeSettle(const QByteArray &line, bool retry);
    void onSettleReply(const QByteArray &line, bool retry, const Result<QByteArray> &reply);
    void retrySettles();
    void resetAcks();

    crypto::KeyPair m_keys;
    Deliver m_deliver;
    DedupeWindow m_seen;
    QPointer<BrokerConnection> m_connection;
    QSet<QByteArray> m_redelivered; // ids announced by "Redelivered:" whose Message: is next
    QHash<QByteArray, DeliveryFacts> m_meta; // ids announced by "Meta:" whose Message: is next
    int m_duplicates = 0;
    bool m_paused = false;
    QList<QByteArray> m_held;
    // Ack/nack lines the rate limit refused, oldest first. They go again one at a time: each
    // confirmation sends the next at once, a refusal waits (m_ackRetryDelayMs, doubling), so
    // a limited client acks at its allowed rate without flooding the broker with refusals.
    // New acks queue behind them.
    QList<QByteArray> m_ackRetry;
    QTimer m_ackRetryTimer;
    int m_ackRetryDelayMs;
    bool m_retryInFlight = false; // the head of m_ackRetry is on the wire
    int m_acksInFlight = 0;
};

} // namespace cmq::client
