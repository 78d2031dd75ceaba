#pragma once
// The sending half of a Client: the outbox in motion. Every message is saved in the outbox
// before it is written, published through a window of unanswered publishes, and removed only
// when the broker answers ACK (or says it already has that id). Receivers' public keys are
// looked up on demand and cached for the life of a connection. Messages the broker cannot take
// yet (no key, no bound queue, storage trouble) wait and are retried; after a reconnect
// everything unconfirmed is published again under the same id.

#include <QHash>
#include <QMap>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QTimer>

#include "client/brokerconnection.h"
#include "client/messagestate.h"
#include "client/outboxstore.h"
#include "crypto/envelopecrypto.h"
#include "util/result.h"

namespace cmq::client {

class Publisher final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Publisher)

public:
    Publisher(OutboxStore &store, int window, int retryDelayMs, QObject *parent = nullptr);

    // Whether payloads are padded to a size bucket before sealing (crypto/padding.h).
    void setPadding(crypto::Padding padding) { m_padding = padding; }
    // Takes over what a previous run left in the outbox; every entry becomes Queued.
    Status load();
    // Seals the payload when the receiver's key is known, assigns the outbox order, saves the
    // entry and schedules it. An id already in the outbox is accepted once: sending it again
    // (an application replaying its own work after a crash) changes nothing.
    Status enqueue(OutboxEntry entry);
    // Withdraws a message the broker has not taken yet; false when it is in flight or gone.
    bool cancel(const QString &messageId);

    void attach(BrokerConnection *connection);
    void detach();

    int pendingCount() const { return int(m_items.size()); }
    bool contains(const QString &messageId) const { return m_items.contains(messageId); }

Q_SIGNALS:
    void stateChanged(const QString &messageId, cmq::client::MessageState state,
                      const QString &detail);
    void drained(); // the outbox became empty

private:
    struct Item
    {
        OutboxEntry entry;
        MessageState state = MessageState::Queued;
        bool inFlight = false;
        quint64 flightGeneration = 0;
    };

    void pump();
    void schedulePump();
    bool seal(Item &item);
    void lookUpKey(const QString &receiver);
    void publish(Item &item);
    void onPublishReply(const QString &messageId, quint64 generation,
                        const Result<QByteArray> &reply);
    void finishItem(const QString &messageId, MessageState state, const QString &detail);
    void delay(Item &item, MessageState state, const QString &detail);
    void setState(Item &item, MessageState state, const QString &detail = {});
    void retryDelayed();

    OutboxStore &m_store;
    int m_window;
    int m_retryDelayMs;
    crypto::Padding m_padding = crypto::Padding::Buckets;
    QPointer<BrokerConnection> m_connection;
    quint64 m_generation = 0;
    int m_inFlight = 0;
    qint64 m_nextSequence = 1;
    QHash<QString, Item> m_items;
    QMap<qint64, QString> m_ready;       // sequence → id: to publish, in outbox order
    QMap<qint64, QString> m_awaitingKey; // sealed once the receiver's key arrives
    QMap<qint64, QString> m_delayed;     // retried when m_retryTimer fires
    QHash<QString, QByteArray> m_keys;   // receiver → raw X25519 public key
    QSet<QString> m_keyLookups;          // receivers with a get_public_key in flight
    QTimer m_retryTimer;
    bool m_pumpScheduled = false;
};

} // namespace cmq::client
