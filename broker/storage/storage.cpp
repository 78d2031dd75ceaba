#include "storage.h"

#include <atomic>

#include <QPointer>
#include <QThread>
#include <QTimer>

#include <openssl/crypto.h>

#include "deadletterstore.h"
#include "storage_p.h"
#include "storagelog.h"
#include "storageworker.h"
#include "topologystore.h"

namespace cmq::storage {

namespace {

QString newConnectionName()
{
    static std::atomic<int> counter{0};
    return QStringLiteral("ciphermq-storage-%1").arg(counter.fetch_add(1) + 1);
}

} // namespace

Storage::Storage(const Config::Database &settings, const QByteArray &aesKey, QObject *parent)
    : QObject(parent), m_settings(settings), m_thread(new QThread(this)),
      m_worker(new StorageWorker(settings, aesKey, newConnectionName())),
      m_updateTimer(new QTimer(this)), m_heldTimer(new QTimer(this)),
      m_pending(std::make_unique<Pending>())
{
    m_worker->setAvailabilityHandler([this](bool available) {
        QMetaObject::invokeMethod(
            this, [this, available] { setAvailable(available); }, Qt::QueuedConnection);
    });
    m_worker->moveToThread(m_thread);
    connect(m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    m_thread->setObjectName(QStringLiteral("ciphermq-storage"));
    m_thread->start();

    m_updateTimer->setSingleShot(true);
    connect(m_updateTimer, &QTimer::timeout, this, [this] { flushUpdates(false); });
    m_heldTimer->setSingleShot(true);
    connect(m_heldTimer, &QTimer::timeout, this, &Storage::flushDeliveryUpdates);
}

Storage::~Storage()
{
    m_updateTimer->stop();
    m_heldTimer->stop();
    if (m_opened) {
        flushDeliveryUpdates();
        // Publishes still waiting were never sent, so nobody got an ACK for them, and their
        // callbacks could not run any more. Jobs held behind them go now, in order.
        if (!m_pending->waiting.empty())
            qCInfo(lcStorage, "dropping publishes that were still waiting for a batch");
        while (!m_pending->held.empty()) {
            const std::function<void()> post = std::move(m_pending->held.front().post);
            m_pending->held.pop_front();
            post();
        }
    }
    // Runs after every job queued so far; the worker writes what it can, then closes. Then
    // the thread gives back what OpenSSL keeps for it (its random generators, used for the
    // key store's nonces) here: left to the thread's exit, that runs after wait() below has
    // returned and can lose the race with the process's exit, where OpenSSL's own cleanup
    // has already gone and the thread's state leaks.
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker] {
            worker->shutdown();
            OPENSSL_thread_stop();
        },
        Qt::BlockingQueuedConnection);
    m_thread->quit();
    m_thread->wait();
    // After the worker: the updates it handed over before closing are written, then this one
    // closes too.
    if (m_updater) {
        QMetaObject::invokeMethod(
            m_updater,
            [updater = m_updater] {
                updater->shutdown();
                OPENSSL_thread_stop();
            },
            Qt::BlockingQueuedConnection);
        m_updaterThread->quit();
        m_updaterThread->wait();
    }
    // Results the worker posted before stopping are dropped with this object's posted events,
    // so no callback runs after this point.
}

Result<RecoveredState> Storage::openAndRecover(qint64 fencingEpoch)
{
    if (m_opened)
        return Result<RecoveredState>::failure(QStringLiteral("storage is already open"));
    std::optional<Result<RecoveredState>> result;
    QMetaObject::invokeMethod(
        m_worker, [&] { result = m_worker->openAndRecover(fencingEpoch); },
        Qt::BlockingQueuedConnection);
    if (!result)
        return Result<RecoveredState>::failure(QStringLiteral("storage worker did not run"));
    m_opened = result->ok();
    m_available = m_opened;
    if (m_opened && m_settings.driver == QLatin1StringView("postgresql") &&
        m_settings.separateUpdateConnection)
        openUpdateConnection(fencingEpoch);
    return std::move(*result);
}

// Without it the updates are written on the worker's connection, between the publishes: a
// warning, not a failure.
void Storage::openUpdateConnection(qint64 fencingEpoch)
{
    auto *thread = new QThread(this);
    auto *updater =
        new StorageWorker(m_settings, {}, newConnectionName() + QStringLiteral("-updates"));
    updater->moveToThread(thread);
    connect(thread, &QThread::finished, updater, &QObject::deleteLater);
    thread->setObjectName(QStringLiteral("ciphermq-updates"));
    thread->start();
    Status opened = failure(QStringLiteral("storage worker did not run"));
    QMetaObject::invokeMethod(
        updater, [&] { opened = updater->openForUpdates(fencingEpoch); },
        Qt::BlockingQueuedConnection);
    if (!opened) {
        qCWarning(lcStorage).noquote()
            << "delivery updates share the publishing connection; their own could not be "
               "opened:"
            << opened.error();
        thread->quit();
        thread->wait();
        delete thread;
        return;
    }
    m_updaterThread = thread;
    m_updater = updater;
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, updater] { worker->setUpdateWriter(updater); },
        Qt::BlockingQueuedConnection);
}

bool Storage::isAvailable() const
{
    return m_opened && m_available;
}

void Storage::setAvailable(bool available)
{
    if (!m_opened || m_available == available)
        return;
    m_available = available;
    if (!available) {
        ++m_stats.outages;
        QPointer<Storage> alive(this);
        failWaitingPublishes(unavailableError());
        if (!alive)
            return;
    }
    Q_EMIT availabilityChanged(available);
}

// --- Ordered jobs ----------------------------------------------------------------------------

// Topology changes and delivery updates keep their order relative to publishes issued before
// them: a job waits here until those records have gone to the worker, whose queue is FIFO.
// Without this, deleteQueue(q) could run before a publish to q that was issued earlier but
// was still waiting for the in-flight transaction, and leave entries for a deleted queue.
void Storage::enqueueOrdered(std::function<void()> post)
{
    m_pending->held.push_back({m_pending->recordsIssued, std::move(post)});
    releaseOrdered();
}

void Storage::releaseOrdered()
{
    while (!m_pending->held.empty() &&
           m_pending->held.front().barrier <= m_pending->recordsReleased) {
        const std::function<void()> post = std::move(m_pending->held.front().post);
        m_pending->held.pop_front();
        post();
    }
}

void Storage::runOrdered(std::function<Status(SqlSession &)> job, StatusCallback done)
{
    if (!m_opened) {
        QMetaObject::invokeMethod(
            this,
            [done = std::move(done)] {
                if (done)
                    done(failure(notOpenError()));
            },
            Qt::QueuedConnection);
        return;
    }
    enqueueOrdered(
        [worker = m_worker, job = std::move(job), reply = onOwnThread<Status>(std::move(done))] {
            QMetaObject::invokeMethod(
                worker, [worker, job, reply] { worker->run(job, reply); }, Qt::QueuedConnection);
        });
}

void Storage::saveExchange(const ExchangeRecord &exchange, StatusCallback done)
{
    runOrdered([exchange](SqlSession &s) { return storage::saveExchange(s, exchange); },
               std::move(done));
}

void Storage::saveQueue(const QueueRecord &queue, StatusCallback done)
{
    runOrdered([queue](SqlSession &s) { return storage::saveQueue(s, queue); }, std::move(done));
}

void Storage::saveBinding(const BindingRecord &binding, StatusCallback done)
{
    runOrdered([binding](SqlSession &s) { return storage::saveBinding(s, binding); },
               std::move(done));
}

void Storage::deleteQueue(const QString &queue, StatusCallback done)
{
    runOrdered([queue](SqlSession &s) { return storage::deleteQueue(s, queue); }, std::move(done));
}

void Storage::purgeQueue(const QString &queue, StatusCallback done)
{
    runOrdered([queue](SqlSession &s) { return storage::purgeQueue(s, queue); }, std::move(done));
}

void Storage::moveEntries(QList<EntryMove> moves, StatusCallback done)
{
    // The marks buffered so far (a delivery of the entry that is moving) go first.
    flushUpdates(true);
    runOrdered([moves = std::move(moves)](SqlSession &s) { return storage::moveEntries(s, moves); },
               std::move(done));
}

// --- Delivery updates ------------------------------------------------------------------------

void Storage::queueUpdate(int kind, const QString &queue, const QByteArray &messageId)
{
    if (!m_opened)
        return; // nothing can have been delivered from a storage that never opened
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QString id = QString::fromUtf8(messageId);
    if (DeliveryUpdate::Kind(kind) == DeliveryUpdate::Kind::Delivered) {
        m_pending->heldDelivered.insert({queue, id}, now);
        if (!m_heldTimer->isActive())
            m_heldTimer->start(DeliveredHoldMs);
        return;
    }
    if (const auto held = m_pending->heldDelivered.constFind({queue, id});
        held != m_pending->heldDelivered.cend()) {
        m_pending->updates.append({DeliveryUpdate::Kind::Delivered, queue, id, held.value()});
        m_pending->heldDelivered.erase(held);
    }
    m_pending->updates.append({DeliveryUpdate::Kind(kind), queue, id, now});
    if (m_pending->updates.size() >= UpdateFlushItems)
        flushUpdates(false);
    else if (!m_updateTimer->isActive())
        m_updateTimer->start(UpdateFlushIntervalMs);
}

void Storage::markDelivered(const QString &queue, const QByteArray &messageId)
{
    queueUpdate(int(DeliveryUpdate::Kind::Delivered), queue, messageId);
}

void Storage::markAcknowledged(const QString &queue, const QByteArray &messageId)
{
    queueUpdate(int(DeliveryUpdate::Kind::Acknowledged), queue, messageId);
}

void Storage::markEvicted(const QString &queue, const QByteArray &messageId)
{
    queueUpdate(int(DeliveryUpdate::Kind::Evicted), queue, messageId);
}

void Storage::flushDeliveryUpdates()
{
    flushUpdates(true);
}

void Storage::flushUpdates(bool includeHeld)
{
    if (includeHeld) {
        m_heldTimer->stop();
        for (auto it = m_pending->heldDelivered.cbegin(); it != m_pending->heldDelivered.cend();
             ++it) {
            m_pending->updates.append(
                {DeliveryUpdate::Kind::Delivered, it.key().first, it.key().second, it.value()});
        }
        m_pending->heldDelivered.clear();
    }
    m_updateTimer->stop();
    if (m_pending->updates.isEmpty())
        return;
    QList<DeliveryUpdate> updates = std::exchange(m_pending->updates, {});
    ++m_stats.updateFlushes;
    m_stats.updateItems += updates.size();
    // The worker keeps them across an outage and writes them after reconnecting.
    enqueueOrdered([worker = m_worker, updates = std::move(updates)] {
        QMetaObject::invokeMethod(
            worker, [worker, updates] { worker->applyUpdates(updates); }, Qt::QueuedConnection);
    });
}

// --- Keys and maintenance --------------------------------------------------------------------

void Storage::savePublicKey(const QString &clientId, const QByteArray &publicKeyBase64,
                            StatusCallback done)
{
    auto reply = onOwnThread<Status>(std::move(done));
    if (!m_opened) {
        reply(failure(notOpenError()));
        return;
    }
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker, clientId, publicKeyBase64, reply] {
            worker->savePublicKey(clientId, publicKeyBase64, reply);
        },
        Qt::QueuedConnection);
}

void Storage::loadPublicKey(const QString &clientId,
                            std::function<void(Result<std::optional<QByteArray>>)> done)
{
    auto reply = onOwnThread<Result<std::optional<QByteArray>>>(std::move(done));
    if (!m_opened) {
        reply(Result<std::optional<QByteArray>>::failure(notOpenError()));
        return;
    }
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, clientId, reply] { worker->loadPublicKey(clientId, reply); },
        Qt::QueuedConnection);
}

void Storage::setRecoveryWindow(int messagesPerQueue)
{
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker, messagesPerQueue] { worker->setRecoveryWindow(messagesPerQueue); },
        Qt::QueuedConnection);
}

void Storage::loadQueuePage(const QString &queue, qint64 afterEntryId,
                            const QByteArray &fromMessageId, int limit,
                            std::function<void(Result<QueuePage>)> done)
{
    auto reply = onOwnThread<Result<QueuePage>>(std::move(done));
    if (!m_opened)
        return reply(Result<QueuePage>::failure(notOpenError()));
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker, queue, afterEntryId, fromMessageId, limit, reply] {
            worker->loadQueuePage(queue, afterEntryId, fromMessageId, limit, reply);
        },
        Qt::QueuedConnection);
}

void Storage::countQueueBacklogs(std::function<void(Result<QList<QueueBacklog>>)> done)
{
    auto reply = onOwnThread<Result<QList<QueueBacklog>>>(std::move(done));
    if (!m_opened)
        return reply(Result<QList<QueueBacklog>>::failure(notOpenError()));
    // Not behind anything: the count is of the snapshot openAndRecover() took, on a connection
    // of its own.
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, reply] { worker->countQueueBacklogs(reply); },
        Qt::QueuedConnection);
}

void Storage::senderOfQueued(const QByteArray &messageId,
                             std::function<void(Result<std::optional<QString>>)> done)
{
    auto reply = onOwnThread<Result<std::optional<QString>>>(std::move(done));
    if (!m_opened)
        return reply(Result<std::optional<QString>>::failure(notOpenError()));
    // Behind the acks and publishes buffered so far: an entry acknowledged a moment ago must not
    // be found still waiting because its delete had not been written yet.
    flushUpdates(true);
    enqueueOrdered([worker = m_worker, messageId, reply] {
        QMetaObject::invokeMethod(
            worker, [worker, messageId, reply] { worker->senderOfQueued(messageId, reply); },
            Qt::QueuedConnection);
    });
}

void Storage::setRetentionDays(int days)
{
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, days] { worker->setRetentionDays(days); },
        Qt::QueuedConnection);
}

void Storage::purgeExpiredMetadata(std::function<void(Result<qint64>)> done)
{
    auto reply = onOwnThread<Result<qint64>>(std::move(done));
    if (!m_opened) {
        reply(Result<qint64>::failure(notOpenError()));
        return;
    }
    // Ordered, so that it sees the delivery updates handed over before it.
    enqueueOrdered([worker = m_worker, reply] {
        QMetaObject::invokeMethod(
            worker, [worker, reply] { worker->purgeExpired(reply); }, Qt::QueuedConnection);
    });
}

} // namespace cmq::storage
