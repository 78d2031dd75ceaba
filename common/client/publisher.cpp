#include "client/publisher.h"

#include "client/clientlog.h"
#include "crypto/envelopecrypto.h"
#include "crypto/keypair.h"
#include "protocol/replyreader.h"

namespace cmq::client {

using ReplyKind = protocol::ReplyLine::Kind;

Publisher::Publisher(OutboxStore &store, int window, int retryDelayMs, QObject *parent)
    : QObject(parent), m_store(store), m_window(qMax(1, window)),
      m_retryDelayMs(qMax(1, retryDelayMs))
{
    m_retryTimer.setSingleShot(true);
    connect(&m_retryTimer, &QTimer::timeout, this, &Publisher::retryDelayed);
}

Status Publisher::load()
{
    auto entries = m_store.readAll();
    if (!entries)
        return failure(entries.error());
    for (OutboxEntry &entry : entries.value()) {
        if (m_items.contains(entry.messageId))
            continue;
        m_nextSequence = qMax(m_nextSequence, entry.sequence + 1);
        const qint64 sequence = entry.sequence;
        const QString id = entry.messageId;
        m_items.insert(id, Item{std::move(entry)});
        m_ready.insert(sequence, id);
        Q_EMIT stateChanged(id, MessageState::Queued, QStringLiteral("left in the outbox"));
    }
    schedulePump();
    return success();
}

Status Publisher::enqueue(OutboxEntry entry)
{
    if (m_items.contains(entry.messageId))
        return success();
    entry.sequence = m_nextSequence++;
    if (!entry.createdAt.isValid())
        entry.createdAt = QDateTime::currentDateTimeUtc();
    Item item{std::move(entry)};
    // Seal before the first save when we can, so the plaintext never touches the disk.
    if (!item.entry.isSealed() && m_keys.contains(item.entry.receiver) && !seal(item))
        return failure(QStringLiteral("cannot encrypt for %1").arg(item.entry.receiver));
    if (const Status saved = m_store.save(item.entry); !saved)
        return failure(QStringLiteral("cannot save to the outbox: %1").arg(saved.error()));
    const QString id = item.entry.messageId;
    const qint64 sequence = item.entry.sequence;
    m_items.insert(id, std::move(item));
    m_ready.insert(sequence, id);
    Q_EMIT stateChanged(id, MessageState::Queued, {});
    schedulePump();
    return success();
}

bool Publisher::cancel(const QString &messageId)
{
    const auto it = m_items.constFind(messageId);
    if (it == m_items.constEnd() || it->inFlight)
        return false;
    finishItem(messageId, MessageState::Cancelled, QStringLiteral("withdrawn before delivery"));
    return true;
}

void Publisher::attach(BrokerConnection *connection)
{
    m_connection = connection;
    // A receiver may have registered a new key while we were away.
    m_keys.clear();
    m_keyLookups.clear();
    retryDelayed();
}

void Publisher::detach()
{
    m_connection = nullptr;
    ++m_generation;
    m_inFlight = 0;
    m_keyLookups.clear();
    for (auto it = m_awaitingKey.cbegin(); it != m_awaitingKey.cend(); ++it)
        m_ready.insert(it.key(), it.value());
    m_awaitingKey.clear();
    for (Item &item : m_items) {
        if (!item.inFlight)
            continue;
        // Unanswered: the broker may or may not have it. Publishing it again under the same id
        // is safe either way.
        item.inFlight = false;
        m_ready.insert(item.entry.sequence, item.entry.messageId);
        setState(item, MessageState::Queued, QStringLiteral("connection lost before the ACK"));
    }
}

void Publisher::schedulePump()
{
    if (m_pumpScheduled)
        return;
    m_pumpScheduled = true;
    QMetaObject::invokeMethod(this, &Publisher::pump, Qt::QueuedConnection);
}

void Publisher::pump()
{
    m_pumpScheduled = false;
    if (!m_connection || !m_connection->isReady())
        return;
    while (m_inFlight < m_window && !m_ready.isEmpty() && m_connection) {
        const auto next = m_ready.begin();
        const qint64 sequence = next.key();
        const QString id = next.value();
        m_ready.erase(next);
        const auto it = m_items.find(id);
        if (it == m_items.end())
            continue;
        if (!it->entry.isSealed()) {
            if (!m_keys.contains(it->entry.receiver)) {
                m_awaitingKey.insert(sequence, id);
                lookUpKey(it->entry.receiver);
                continue;
            }
            if (!seal(*it))
                continue;
            // Replace the plaintext copy; if that fails the old copy is sealed again after a
            // restart, under the same id.
            if (const Status saved = m_store.save(it->entry); !saved)
                qCWarning(lcClient, "outbox: %s", qPrintable(saved.error()));
        }
        publish(*it);
    }
}

bool Publisher::seal(Item &item)
{
    OutboxEntry &entry = item.entry;
    const auto sealed = crypto::seal(entry.payload, m_keys.value(entry.receiver), m_padding);
    if (!sealed) {
        finishItem(entry.messageId, MessageState::Failed,
                   QStringLiteral("cannot encrypt for %1: %2").arg(entry.receiver, sealed.error()));
        return false;
    }
    entry.envelope = crypto::buildEnvelopeJson(entry.messageId, entry.receiver, sealed.value(),
                                               entry.createdAt, entry.extraFields);
    entry.payload.clear();
    return true;
}

void Publisher::lookUpKey(const QString &receiver)
{
    if (m_keyLookups.contains(receiver) || !m_connection)
        return;
    m_keyLookups.insert(receiver);
    m_connection->request(
        "get_public_key " + receiver.toUtf8(), [this, receiver](const Result<QByteArray> &reply) {
            m_keyLookups.remove(receiver);
            if (!reply)
                return; // detach() put the waiting messages back
            const protocol::ReplyLine line = protocol::readReply(reply.value());
            QString problem;
            MessageState state = MessageState::WaitingForReceiver;
            if (line.kind == ReplyKind::PublicKey) {
                const auto key = crypto::publicKeyFromBase64(line.text.toByteArray());
                if (key)
                    m_keys.insert(receiver, key.value());
                else
                    problem = QStringLiteral("the broker's key for %1 is unusable: %2")
                                  .arg(receiver, key.error());
            } else if (line.kind == ReplyKind::PublicKeyNotFound) {
                problem = QStringLiteral("%1 has not registered a public key yet").arg(receiver);
            } else {
                problem = QString::fromUtf8(reply.value());
                state = MessageState::Queued;
            }
            const bool refused = line.isError("Permission denied");
            QList<QString> ids;
            for (auto it = m_awaitingKey.begin(); it != m_awaitingKey.end();) {
                const auto item = m_items.constFind(it.value());
                if (item == m_items.constEnd() || item->entry.receiver == receiver) {
                    if (item != m_items.constEnd())
                        ids.append(it.value());
                    it = m_awaitingKey.erase(it);
                } else {
                    ++it;
                }
            }
            for (const QString &id : std::as_const(ids)) {
                const auto item = m_items.find(id);
                if (item == m_items.end())
                    continue;
                if (problem.isEmpty())
                    m_ready.insert(item->entry.sequence, id);
                else if (refused)
                    finishItem(id, MessageState::Failed, problem);
                else
                    delay(*item, state, problem);
            }
            pump();
        });
}

void Publisher::publish(Item &item)
{
    item.inFlight = true;
    item.flightGeneration = m_generation;
    ++m_inFlight;
    setState(item, MessageState::Sent);
    const OutboxEntry &entry = item.entry;
    const QString id = entry.messageId;
    const quint64 generation = m_generation;
    m_connection->request("publish " + entry.exchange.toUtf8() + ' ' + entry.routingKey.toUtf8() +
                              ' ' + entry.envelope,
                          [this, id, generation](const Result<QByteArray> &reply) {
                              onPublishReply(id, generation, reply);
                          });
}

void Publisher::onPublishReply(const QString &messageId, quint64 generation,
                               const Result<QByteArray> &reply)
{
    const auto it = m_items.find(messageId);
    if (it == m_items.end())
        return; // confirmed already (an earlier connection's answer) or cancelled
    Item &item = *it;
    const bool current = item.inFlight && item.flightGeneration == generation;
    if (current) {
        item.inFlight = false;
        --m_inFlight;
    }
    if (!reply) {
        // The connection went away; if detach() has not run yet, keep the message scheduled.
        if (current)
            m_ready.insert(item.entry.sequence, messageId);
        return;
    }
    const QByteArray &line = reply.value();
    const QByteArray id = messageId.toUtf8();
    const protocol::ReplyLine read = protocol::readReply(line);
    if (read.kind == ReplyKind::Ack && read.id == id) {
        finishItem(messageId, MessageState::Delivered, {});
    } else if (read.kind == ReplyKind::Duplicate && read.id == id) {
        // Published before (before a reconnect, a crash, or by the application itself): the
        // broker has it, which is exactly what the ACK would have said.
        finishItem(messageId, MessageState::Delivered,
                   QStringLiteral("the broker already had this message id"));
    } else if (!current && item.inFlight) {
        // A refusal from an earlier connection while a newer attempt is under way: that
        // attempt's answer decides.
    } else if (read.kind == ReplyKind::Unroutable) {
        delay(item, MessageState::WaitingForReceiver, QString::fromUtf8(line));
    } else if (read.kind == ReplyKind::InvalidMessageFormat || read.isError("Permission denied") ||
               (read.kind == ReplyKind::MissingArgument && read.text == "Missing parameters") ||
               read.kind == ReplyKind::UnknownCommand) {
        finishItem(messageId, MessageState::Failed, QString::fromUtf8(line));
    } else {
        // Storage trouble, a full queue, anything transient: try again later.
        delay(item, MessageState::Queued, QString::fromUtf8(line));
    }
    pump();
}

void Publisher::finishItem(const QString &messageId, MessageState state, const QString &detail)
{
    const auto it = m_items.find(messageId);
    if (it == m_items.end())
        return;
    const Item item = std::move(*it);
    m_items.erase(it);
    m_ready.remove(item.entry.sequence);
    m_awaitingKey.remove(item.entry.sequence);
    m_delayed.remove(item.entry.sequence);
    if (item.inFlight)
        --m_inFlight;
    if (const Status removed = m_store.remove(messageId); !removed)
        qCWarning(lcClient, "outbox: %s", qPrintable(removed.error()));
    Q_EMIT stateChanged(messageId, state, detail);
    if (m_items.isEmpty())
        Q_EMIT drained();
}

void Publisher::delay(Item &item, MessageState state, const QString &detail)
{
    m_ready.remove(item.entry.sequence);
    m_awaitingKey.remove(item.entry.sequence);
    m_delayed.insert(item.entry.sequence, item.entry.messageId);
    setState(item, state, detail);
    if (!m_retryTimer.isActive())
        m_retryTimer.start(m_retryDelayMs);
}

void Publisher::setState(Item &item, MessageState state, const QString &detail)
{
    if (item.state == state && detail.isEmpty())
        return;
    item.state = state;
    Q_EMIT stateChanged(item.entry.messageId, state, detail);
}

void Publisher::retryDelayed()
{
    m_retryTimer.stop();
    for (auto it = m_delayed.cbegin(); it != m_delayed.cend(); ++it)
        m_ready.insert(it.key(), it.value());
    m_delayed.clear();
    schedulePump();
}

} // namespace cmq::client
