// Storage's group commit (kept apart from storage.cpp, which holds the lifecycle, the ordered
// jobs and the delivery updates): publishes wait for the transaction in flight, then go
// together into the next one.

#include <QPointer>

#include "storage_p.h"
#include "storageworker.h"

namespace cmq::storage {

// --- Publishes: group commit -------------------------------------------------------------

void Storage::publish(QList<MessageRecord> records, std::function<void(QList<PublishResult>)> done)
{
    auto request = std::make_shared<Pending::Request>();
    request->records = std::move(records);
    request->results.resize(request->records.size());
    request->unresolved = request->records.size();
    request->done = std::move(done);
    m_pending->recordsIssued += request->records.size();

    if (request->records.isEmpty() || !isAvailable()) {
        const QString error = m_opened ? unavailableError() : notOpenError();
        for (PublishResult &result : request->results)
            result = {PublishOutcome::Failed, error};
        m_stats.failedRecords += request->records.size();
        m_pending->recordsReleased += request->records.size();
        request->unresolved = 0;
        // Answer asynchronously like every other outcome, so callers never re-enter.
        QMetaObject::invokeMethod(
            this,
            [request] {
                if (request->done)
                    request->done(std::move(request->results));
            },
            Qt::QueuedConnection);
        releaseOrdered();
        return;
    }
    m_pending->waiting.push_back(std::move(request));
    schedulePublishDispatch();
}

// Dispatch at the end of the current event-loop pass rather than at once: publishes read from
// one socket read arrive together and should share the first transaction too.
void Storage::schedulePublishDispatch()
{
    if (m_dispatchScheduled || m_batchesInFlight >= MaxBatchesInFlight)
        return;
    m_dispatchScheduled = true;
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_dispatchScheduled = false;
            dispatchPublishes();
        },
        Qt::QueuedConnection);
}

qsizetype Storage::publishBatchLimit(qsizetype waiting, int batchesInFlight)
{
    if (waiting <= 0 || batchesInFlight >= MaxBatchesInFlight)
        return 0;
    if (batchesInFlight > 0)
        return waiting >= MinPipelinedBatch ? MaxBatchRecords : 0;
    if (MaxBatchesInFlight > 1 && waiting >= 2 * MinPipelinedBatch)
        return qMin<qsizetype>((waiting + 1) / 2, MaxBatchRecords);
    return MaxBatchRecords;
}

void Storage::dispatchPublishes()
{
    const qsizetype limit = publishBatchLimit(
        qsizetype(m_pending->recordsIssued - m_pending->recordsReleased), m_batchesInFlight);
    if (limit == 0 || m_pending->waiting.empty())
        return;

    QList<MessageRecord> batch;
    QList<Pending::Slot> slots;
    qint64 bytes = 0;
    bool full = false;
    while (!full && !m_pending->waiting.empty()) {
        const Pending::RequestPtr &request = m_pending->waiting.front();
        while (m_pending->frontTaken < request->records.size()) {
            MessageRecord &record = request->records[m_pending->frontTaken];
            const qint64 size = record.envelope.size() + 256; // + ids, names, row overhead
            if (batch.size() >= limit || (!batch.isEmpty() && bytes + size > MaxBatchBytes)) {
                full = true;
                break;
            }
            bytes += size;
            batch.append(std::move(record)); // the request keeps only its results from here
            slots.append({request, m_pending->frontTaken});
            ++m_pending->frontTaken;
        }
        if (m_pending->frontTaken == request->records.size()) {
            m_pending->waiting.pop_front();
            m_pending->frontTaken = 0;
        }
    }

    ++m_batchesInFlight;
    m_pending->recordsReleased += batch.size();
    ++m_stats.publishBatches;
    m_stats.publishRecords += batch.size();
    m_stats.lastBatchRecords = int(batch.size());
    m_stats.maxBatchRecords = qMax(m_stats.maxBatchRecords, int(batch.size()));

    auto finished = [this, slots = std::move(slots)](StorageWorker::BatchReport report) {
        --m_batchesInFlight;
        m_stats.lastCommitMs = report.commitMs;
        m_stats.maxCommitMs = qMax(m_stats.maxCommitMs, report.commitMs);
        m_stats.totalCommitMs += report.commitMs;
        std::vector<Pending::RequestPtr> completed;
        for (qsizetype i = 0; i < slots.size(); ++i) {
            const PublishResult result =
                i < report.results.size()
                    ? report.results[i]
                    : PublishResult{PublishOutcome::Failed, QStringLiteral("internal error")};
            switch (result.outcome) {
            case PublishOutcome::Stored:
                ++m_stats.storedRecords;
                break;
            case PublishOutcome::Duplicate:
                ++m_stats.duplicateRecords;
                break;
            case PublishOutcome::Failed:
                ++m_stats.failedRecords;
                break;
            }
            const Pending::Slot &slot = slots[i];
            slot.request->results[slot.index] = result;
            if (--slot.request->unresolved == 0)
                completed.push_back(slot.request);
        }
        // What waited during this commit goes into the next one right away (up to the limit).
        dispatchPublishes();
        QPointer<Storage> alive(this);
        for (const Pending::RequestPtr &request : completed) {
            if (request->done)
                request->done(std::move(request->results));
            if (!alive)
                return; // a callback destroyed the storage
        }
    };
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker, batch = std::move(batch),
         reply = onOwnThread<StorageWorker::BatchReport>(std::move(finished))] {
            worker->publish(batch, reply);
        },
        Qt::QueuedConnection);
    releaseOrdered();
    // The second half of a split burst, or what a full batch left behind, may go at once.
    dispatchPublishes();
}

void Storage::failWaitingPublishes(const QString &error)
{
    std::vector<Pending::RequestPtr> completed;
    for (const Pending::RequestPtr &request : m_pending->waiting) {
        const qsizetype first = request == m_pending->waiting.front() ? m_pending->frontTaken : 0;
        for (qsizetype i = first; i < request->records.size(); ++i) {
            request->results[i] = {PublishOutcome::Failed, error};
            ++m_stats.failedRecords;
            ++m_pending->recordsReleased;
            if (--request->unresolved == 0)
                completed.push_back(request);
        }
    }
    m_pending->waiting.clear();
    m_pending->frontTaken = 0;
    releaseOrdered();
    QPointer<Storage> alive(this);
    for (const Pending::RequestPtr &request : completed) {
        if (request->done)
            request->done(std::move(request->results));
        if (!alive)
            return;
    }
}

} // namespace cmq::storage
