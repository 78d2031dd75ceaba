#pragma once
// In-memory stand-ins for the router's unit tests: a RouterStore that records every call and
// commits publishes when the test says so, and an Endpoint that collects its deliveries.

#include <functional>

#include <QByteArray>
#include <QList>
#include <QRegularExpression>
#include <QStringList>

#include "core/endpoint.h"
#include "core/message.h"
#include "protocol/replies.h"
#include "storage/storage.h"

namespace cmq::test {

class FakeRouterStore final : public storage::RouterStore
{
public:
    struct PendingPublish
    {
        QList<storage::MessageRecord> records;
        std::function<void(QList<storage::PublishResult>)> done;
    };

    // Topology and admin writes: answered at once with `nextStatus`, or held in `jobs` until
    // runJobs() while `holdJobs` is set.
    bool holdJobs = false;
    Status nextStatus = success();
    QList<std::function<void()>> jobs;
    // Publishes wait here until commit().
    QList<PendingPublish> publishes;
    // "delivered <queue> <id>", "acknowledged ...", "evicted ...", "purged <queue>", ...
    QStringList calls;

    void publish(QList<storage::MessageRecord> records,
                 std::function<void(QList<storage::PublishResult>)> done) override
    {
        publishes.append(PendingPublish{std::move(records), std::move(done)});
    }
    // Commits the oldest pending publish with one result for every record in it.
    void commit(storage::PublishOutcome outcome = storage::PublishOutcome::Stored,
                const QString &error = {})
    {
        PendingPublish pending = publishes.takeFirst();
        const QList<storage::PublishResult> results(pending.records.size(),
                                                    storage::PublishResult{outcome, error});
        pending.done(results);
    }
    void commitAll()
    {
        while (!publishes.isEmpty())
            commit();
    }

    void saveExchange(const storage::ExchangeRecord &e, StatusCallback done) override
    {
        job(QStringLiteral("saveExchange %1 %2").arg(e.name, e.type), std::move(done));
    }
    void saveQueue(const storage::QueueRecord &q, StatusCallback done) override
    {
        job(QStringLiteral("saveQueue %1 %2 %3").arg(q.name).arg(q.maxLength).arg(q.overflow),
            std::move(done));
    }
    void saveBinding(const storage::BindingRecord &b, StatusCallback done) override
    {
        job(QStringLiteral("saveBinding %1 %2 %3").arg(b.queue, b.exchange, b.routingKey),
            std::move(done));
    }
    void deleteQueue(const QString &queue, StatusCallback done) override
    {
        job(QStringLiteral("deleteQueue %1").arg(queue), std::move(done));
    }
    void purgeQueue(const QString &queue, StatusCallback done) override
    {
        job(QStringLiteral("purgeQueue %1").arg(queue), std::move(done));
    }
    // "move <from> <id> -> <to>,<to> <reason>", one call per move ("-" for no reason).
    void moveEntries(QList<storage::EntryMove> moves, StatusCallback done) override
    {
        QStringList described;
        for (const storage::EntryMove &m : moves) {
            described.append(QStringLiteral("move %1 %2 -> %3 %4")
                                 .arg(m.fromQueue, QString::fromUtf8(m.messageId),
                                      m.toQueues.join(u','),
                                      m.reason.isEmpty() ? QStringLiteral("-") : m.reason));
        }
        job(described.join(u';'), std::move(done));
    }
    void markDelivered(const QString &queue, const QByteArray &id) override
    {
        calls.append(QStringLiteral("delivered %1 %2").arg(queue, QString::fromUtf8(id)));
    }
    void markAcknowledged(const QString &queue, const QByteArray &id) override
    {
        calls.append(QStringLiteral("acknowledged %1 %2").arg(queue, QString::fromUtf8(id)));
    }
    void markEvicted(const QString &queue, const QByteArray &id) override
    {
        calls.append(QStringLiteral("evicted %1 %2").arg(queue, QString::fromUtf8(id)));
    }

    void runJobs()
    {
        while (!jobs.isEmpty())
            jobs.takeFirst()();
    }
    // The calls that start with `prefix`, e.g. "evicted".
    QStringList callsOf(const QString &prefix) const
    {
        return calls.filter(QRegularExpression(QLatin1Char('^') + prefix + QLatin1Char(' ')));
    }

private:
    void job(const QString &call, StatusCallback done)
    {
        calls.append(call);
        const Status status = nextStatus;
        auto run = [status, done = std::move(done)] { done(status); };
        if (holdJobs)
            jobs.append(std::move(run));
        else
            run();
    }
};

class FakeEndpoint final : public Endpoint
{
public:
    explicit FakeEndpoint(quint64 id, QString cn = QStringLiteral("receiver_1"))
        : m_id(id), m_cn(std::move(cn))
    {
    }
    quint64 endpointId() const override { return m_id; }
    QString clientId() const override { return m_cn; }
    void pushDelivery(const Message &message, const DeliveryFacts &facts) override
    {
        received += deliveryLines(message, facts);
    }
    bool canTakeDeliveries() const override { return writable; }
    void pushEvent(const QByteArray &line) override { received += line; }

    // The ids of the "Message: <id> ..." lines received so far, a "*" after a redelivered one.
    QStringList deliveredIds() const
    {
        QStringList ids;
        bool redelivered = false;
        for (const QByteArray &line : received.split('\n')) {
            if (line.startsWith("Redelivered: ")) {
                redelivered = true;
            } else if (line.startsWith("Message: ")) {
                const QByteArray id = line.mid(9, line.indexOf(' ', 9) - 9);
                ids.append(QString::fromUtf8(id) + (redelivered ? "*" : ""));
                redelivered = false;
            }
        }
        return ids;
    }

    QByteArray received;
    bool writable = true;

private:
    quint64 m_id;
    QString m_cn;
};

} // namespace cmq::test
