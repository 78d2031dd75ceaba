// Storage's requeue of a dead-letter queue's backlog (kept apart from storage.cpp, which holds
// the publish path): the SQL runs on the worker thread, ordered behind the jobs before it.

#include <memory>

#include "deadletterstore.h"
#include "storage.h"

namespace cmq::storage {

void Storage::requeueBacklogDeadLetters(const QString &queue, qint64 afterEntryId,
                                        const QByteArray &fromMessageId,
                                        std::function<void(Result<QList<RequeuedBacklog>>)> done)
{
    flushUpdates(true); // acknowledged or evicted entries handed over before are gone then
    // Ordered like moveEntries(), so it runs after the window's moves issued before it.
    auto moved = std::make_shared<QList<RequeuedBacklog>>();
    runOrdered(
        [queue, afterEntryId, fromMessageId, moved](SqlSession &s) -> Status {
            Result<QList<RequeuedBacklog>> result =
                storage::requeueBacklogDeadLetters(s, queue, afterEntryId, fromMessageId);
            if (!result)
                return failure(result.error());
            *moved = std::move(result.value());
            return success();
        },
        [moved, done = std::move(done)](Status status) {
            if (!status)
                return done(Result<QList<RequeuedBacklog>>::failure(status.error()));
            done(std::move(*moved));
        });
}

} // namespace cmq::storage
