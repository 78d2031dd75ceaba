// Storage's message-metadata listing (kept apart from storage.cpp, which holds the publish
// path). Read on the worker thread from the database, never from the router's queues.

#include <memory>
#include <optional>

#include "messagelisting.h"
#include "storage.h"
#include "storageworker.h"

namespace cmq::storage {

void Storage::listQueueMessages(const MessageListingQuery &query,
                                std::function<void(Result<MessageListingPage>)> done)
{
    using R = Result<MessageListingPage>;
    if (!m_opened) {
        QMetaObject::invokeMethod(
            this, [done] { done(R::failure(QStringLiteral("storage is not open"))); },
            Qt::QueuedConnection);
        return;
    }
    // Not ordered behind publishes: a page is a view of a moving queue either way.
    QMetaObject::invokeMethod(
        m_worker,
        [this, worker = m_worker, query, done] {
            auto result = std::make_shared<std::optional<R>>();
            worker->run(
                [&](SqlSession &s) {
                    *result = cmq::storage::listQueueMessages(s, query);
                    return (*result)->ok() ? success() : failure((*result)->error());
                },
                [this, result, done](Status st) {
                    R answer = result->has_value() ? std::move(**result) : R::failure(st.error());
                    QMetaObject::invokeMethod(
                        this, [done, answer = std::move(answer)] { done(answer); },
                        Qt::QueuedConnection);
                });
        },
        Qt::QueuedConnection);
}

} // namespace cmq::storage
