#pragma once
// The receiving half of a Client: turns pushed "Message:" lines into decrypted messages for the
// application, acknowledges each after the application has handled it, and drops redeliveries of
// messages it already handed over (the dedupe window).

#include <functional>

#include <QObject>
#include <QPointer>
#include <QSet>

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

Q_SIGNALS:
    // A message that cannot be opened (not for our key, altered, malformed): it is dropped
    // from the queue, since no retry could ever open it.
    void rejected(const QString &messageId, const QString &error);

private:
    void acknowledge(const QByteArray &messageId);
    void handleMessage(const QByteArray &line);

    crypto::KeyPair m_keys;
    Deliver m_deliver;
    DedupeWindow m_seen;
    QPointer<BrokerConnection> m_connection;
    QSet<QByteArray> m_redelivered; // ids announced by "Redelivered:" whose Message: is next
    int m_duplicates = 0;
    bool m_paused = false;
    QList<QByteArray> m_held;
};

} // namespace cmq::client
