#pragma once
// Storage's private parts, shared by the files that implement it (storage.cpp: lifecycle,
// ordered jobs, delivery updates; storagepublish.cpp: the group commit).

#include <deque>
#include <functional>
#include <memory>

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QString>

#include "deliverystore.h"
#include "storage.h"

namespace cmq::storage {

inline QString notOpenError()
{
    return QStringLiteral("storage not open");
}

inline QString unavailableError()
{
    return QStringLiteral("storage unavailable");
}

struct Storage::Pending
{
    struct Request
    {
        QList<MessageRecord> records;
        QList<PublishResult> results;
        qsizetype unresolved = 0;
        std::function<void(QList<PublishResult>)> done;
    };
    using RequestPtr = std::shared_ptr<Request>;
    struct Slot
    {
        RequestPtr request;
        qsizetype index;
    };
    // A job that must not overtake publishes issued before it (see releaseOrdered()).
    struct HeldJob
    {
        quint64 barrier;
        std::function<void()> post;
    };

    std::deque<RequestPtr> waiting;
    qsizetype frontTaken = 0; // records of waiting.front() already in a batch
    quint64 recordsIssued = 0;
    quint64 recordsReleased = 0; // handed to the worker, or failed without it
    std::deque<HeldJob> held;
    QList<DeliveryUpdate> updates;
    // Delivered marks wait here up to DeliveredHoldMs: most deliveries are acknowledged within
    // that time, and then the two go to the database together (one metadata update, and no
    // queue-entry update for an entry about to be deleted).
    QHash<std::pair<QString, QString>, QDateTime> heldDelivered; // (queue, message id) → when
};

template <typename T> std::function<void(T)> Storage::onOwnThread(std::function<void(T)> done)
{
    // Called on the worker thread; `this` outlives the worker (see the destructor).
    return [this, done = std::move(done)](T value) {
        QMetaObject::invokeMethod(
            this,
            [done, value = std::move(value)]() mutable {
                if (done)
                    done(std::move(value));
            },
            Qt::QueuedConnection);
    };
}

} // namespace cmq::storage
