// Every topology, policy, delivery, publish and rate-limit refusal, with the exact line the
// client or the admin gets back for it. The texts are what existing clients and operators read
// (shared/spec/compatibility.md, docs/PROTOCOL.md, docs/CONFIGURATION.md's quotas), so each row
// records the line byte for byte. Requests go through the dispatcher and handlers on an
// in-memory store; the refusals only the admin commands or a race can reach are asked of the
// router directly and turned into the admin's error line.

#include <QtTest>

#include "core/router.h"
#include "dispatcherharness.h"
#include "handlers/handlers.h"
#include "protocol/replies.h"
#include "routerharness.h"

using namespace cmq;
using test::DispatcherHarness;

Q_DECLARE_METATYPE(QByteArrayList)

namespace {

// The admin's error line for a failed router call ("Error: <text>\n", admin/admincommands.cpp).
template <typename R> QByteArray adminLine(const R &result)
{
    return handlers::refusalLine(result);
}

// Roles as the rows name them; sender roles connect as sender_1, the others as receiver_1.
constexpr int receiver = int(Role::Receiver);
constexpr int admin = int(Role::Admin);
constexpr int senderRole = int(Role::Sender);

// An envelope the publish handlers accept, with the id `id`.
QByteArray envelope(const char *id)
{
    return QByteArray(R"({"message_id":")") + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"a","nonce":"b",)"
           R"("ciphertext":"c"})";
}

} // namespace

class tst_Refusals : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void requestLines_data();
    void requestLines();
    void routerCalls_data();
    void routerCalls();
    void publishes_data();
    void publishes();
    void rateLimited_data();
    void rateLimited();
};

void tst_Refusals::requestLines_data()
{
    QTest::addColumn<int>("roles");
    QTest::addColumn<int>("quota");            // every per-CN quota; 0: the defaults
    QTest::addColumn<QByteArrayList>("setup"); // lines that must succeed first
    QTest::addColumn<QString>("storageError"); // storage fails with it after the setup
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QByteArray>("reply");

    const QByteArrayList none;
    const QByteArrayList queue{"declare_queue receiver_1_in"};
    const QByteArrayList bound{"declare_exchange ex", "declare_queue receiver_1_in",
                               "bind receiver_1_in ex receiver_1_key"};

    // declare_exchange
    QTest::newRow("declare_exchange, other type")
        << receiver << 0 << QByteArrayList{"declare_exchange ex"} << QString()
        << QByteArray("declare_exchange ex topic")
        << QByteArray("Error: Exchange 'ex' exists with type direct, not topic\n");
    QTest::newRow("declare_exchange, quota")
        << receiver << 1 << QByteArrayList{"declare_exchange e1"} << QString()
        << QByteArray("declare_exchange e2")
        << QByteArray("Error: Exchange quota of 'receiver_1' reached (1 exchanges)\n");
    QTest::newRow("declare_exchange, storage")
        << receiver << 0 << none << QStringLiteral("disk full") << QByteArray("declare_exchange e1")
        << QByteArray("Error: disk full\n");

    // declare_queue
    QTest::newRow("declare_queue, quota")
        << receiver << 1 << queue << QString() << QByteArray("declare_queue receiver_1_b")
        << QByteArray("Error: Queue quota of 'receiver_1' reached (1 queues)\n");
    QTest::newRow("declare_queue, storage")
        << receiver << 0 << none << QStringLiteral("disk full")
        << QByteArray("declare_queue receiver_1_in") << QByteArray("Error: disk full\n");

    // bind
    QTest::newRow("bind, no queue")
        << receiver << 0 << QByteArrayList{"declare_exchange ex"} << QString()
        << QByteArray("bind receiver_1_in ex receiver_1_key")
        << QByteArray("Error: Queue 'receiver_1_in' not found\n");
    QTest::newRow("bind, no exchange")
        << receiver << 0 << queue << QString() << QByteArray("bind receiver_1_in ex receiver_1_key")
        << QByteArray("Error: Exchange 'ex' not found\n");
    QTest::newRow("bind, quota")
        << receiver << 1 << bound << QString()
        << QByteArray("bind receiver_1_in ex receiver_1_other")
        << QByteArray("Error: Binding quota of 'receiver_1' reached (1 bindings)\n");
    QTest::newRow("bind, storage")
        << receiver << 0 << QByteArrayList{"declare_exchange ex", "declare_queue receiver_1_in"}
        << QStringLiteral("disk full") << QByteArray("bind receiver_1_in ex receiver_1_key")
        << QByteArray("Error: disk full\n");

    // queue_policy
    QTest::newRow("queue_policy, no queue")
        << receiver << 0 << none << QString()
        << QByteArray("queue_policy receiver_1_in 10 drop-head")
        << QByteArray("Error: Queue 'receiver_1_in' not found\n");
    QTest::newRow("queue_policy, no dead-letter exchange")
        << admin << 0 << queue << QString()
        << QByteArray("queue_policy receiver_1_in 10 drop-head dlx=gone")
        << QByteArray("Error: Exchange 'gone' not found\n");
    QTest::newRow("queue_policy, storage") << receiver << 0 << queue << QStringLiteral("disk full")
                                           << QByteArray("queue_policy receiver_1_in 10 drop-head")
                                           << QByteArray("Error: disk full\n");

    // consume of a queue not declared yet declares it
    QTest::newRow("consume, quota")
        << receiver << 1 << queue << QString() << QByteArray("consume receiver_1_b")
        << QByteArray("Error: Queue quota of 'receiver_1' reached (1 queues)\n");
    QTest::newRow("consume, storage")
        << receiver << 0 << none << QStringLiteral("disk full")
        << QByteArray("consume receiver_1_in") << QByteArray("Error: disk full\n");

    // ack and nack of what this connection does not hold
    const QByteArray notAwaiting(
        "Error: Message m1 is not awaiting acknowledgement from this connection\n");
    QTest::newRow("ack, nothing awaiting")
        << receiver << 0 << none << QString() << QByteArray("ack m1") << notAwaiting;
    QTest::newRow("nack, nothing awaiting")
        << receiver << 0 << none << QString() << QByteArray("nack m1") << notAwaiting;
    QTest::newRow("nack drop, nothing awaiting")
        << receiver << 0 << none << QString() << QByteArray("nack m1 drop") << notAwaiting;
}

void tst_Refusals::requestLines()
{
    QFETCH(int, roles);
    QFETCH(int, quota);
    QFETCH(QByteArrayList, setup);
    QFETCH(QString, storageError);
    QFETCH(QByteArray, line);
    QFETCH(QByteArray, reply);
    Config::Performance performance;
    if (quota > 0)
        performance.maxQueuesPerCn = performance.maxExchangesPerCn = performance.maxBindingsPerCn =
            quota;
    DispatcherHarness h(Roles(Role(roles)), std::nullopt, performance);
    for (const QByteArray &step : std::as_const(setup)) {
        const QByteArray answer = h.run(step);
        QVERIFY2(!answer.startsWith("Error") && !answer.isEmpty(),
                 (step + ": " + answer).constData());
    }
    if (!storageError.isEmpty())
        h.store.nextStatus = failure(storageError);
    QCOMPARE(h.run(line), reply);
}

void tst_Refusals::routerCalls_data()
{
    QTest::addColumn<QString>("call");
    QTest::addColumn<QString>("storageError"); // storage fails with it after "q" is declared
    QTest::addColumn<QByteArray>("reply");

    const QByteArray noQueue("Error: Queue 'nope' not found\n");
    QTest::newRow("consume, no queue") << "consume nope" << QString() << noQueue;
    QTest::newRow("declare and consume, closed meanwhile")
        << "declareAndConsume closed" << QString()
        << QByteArray("Error: Connection closed before the subscription\n");
    QTest::newRow("purge, no queue") << "purge nope" << QString() << noQueue;
    QTest::newRow("purge, storage")
        << "purge q" << QStringLiteral("disk full") << QByteArray("Error: disk full\n");
    QTest::newRow("delete, no queue") << "delete nope" << QString() << noQueue;
    QTest::newRow("delete, storage")
        << "delete q" << QStringLiteral("disk full") << QByteArray("Error: disk full\n");
    QTest::newRow("requeue, no queue") << "requeue nope" << QString() << noQueue;
}

void tst_Refusals::routerCalls()
{
    QFETCH(QString, call);
    QFETCH(QString, storageError);
    QFETCH(QByteArray, reply);
    DispatcherHarness h(Roles(Role::Receiver));
    Router &router = h.router;
    router.declareQueue("q", "receiver_1", [](Verdict s) { QVERIFY(s); });
    if (!storageError.isEmpty())
        h.store.nextStatus = failure(storageError);
    const QString queue = call.section(u' ', 1);
    QByteArray answer = "no answer";
    const auto keep = [&answer](const auto &result) {
        answer = result ? QByteArray("done") : adminLine(result);
    };
    if (call.startsWith("consume ")) {
        keep(router.consume(&h.session, queue));
    } else if (call.startsWith("declareAndConsume ")) {
        h.store.holdJobs = true;
        router.declareAndConsume(&h.session, "fresh", "receiver_1", keep);
        router.endpointClosed(&h.session);
        h.store.runJobs();
    } else if (call.startsWith("purge ")) {
        router.purgeQueue(queue, keep);
    } else if (call.startsWith("delete ")) {
        router.deleteQueue(queue, keep);
    } else if (call.startsWith("requeue ")) {
        router.requeueDeadLetters(queue, 0, keep);
    } else {
        QFAIL(qPrintable(call));
    }
    QCOMPARE(answer, reply);
}

void tst_Refusals::publishes_data()
{
    QTest::addColumn<QByteArray>("queueSettings"); // "<max length> <max bytes> <overflow>"
    QTest::addColumn<qint64>("budget");            // the memory budget; 0: none
    QTest::addColumn<QByteArray>("first");         // published and committed before: "<id> <bytes>"
    QTest::addColumn<QByteArray>("second");        // "<id> <bytes> [<routing key>] [fail]"
    QTest::addColumn<QByteArray>("reply");         // publish's line
    QTest::addColumn<QByteArray>("batchReply");    // publish_batch's line for it

    const QByteArray defaults("10000 1073741824 drop-head");
    QTest::newRow("queue full, messages")
        << QByteArray("1 1073741824 reject-publish") << qint64(0) << QByteArray("m1 10")
        << QByteArray("m2 10")
        << QByteArray("Error: Queue 'q' is full (1 messages, overflow reject-publish): message m2 "
                      "rejected\n")
        << QByteArray("Error: Queue 'q' is full (1 messages, overflow reject-publish): message m2 "
                      "rejected for message m2\n");
    QTest::newRow("queue full, bytes")
        << QByteArray("10000 100 reject-publish") << qint64(0) << QByteArray("m1 60")
        << QByteArray("m2 60")
        << QByteArray("Error: Queue 'q' is full (100 bytes, overflow reject-publish): message m2 "
                      "rejected\n")
        << QByteArray("Error: Queue 'q' is full (100 bytes, overflow reject-publish): message m2 "
                      "rejected for message m2\n");
    QTest::newRow("larger than the queue's byte limit")
        << QByteArray("10000 100 drop-head") << qint64(0) << QByteArray() << QByteArray("m2 101")
        << QByteArray("Error: Message m2 of 101 bytes exceeds queue 'q' byte limit (100 bytes, "
                      "performance.max_queue_bytes)\n")
        << QByteArray("Error: Message m2 of 101 bytes exceeds queue 'q' byte limit (100 bytes, "
                      "performance.max_queue_bytes) for message m2\n");
    // The id and the queue are quoted as they are, whatever they hold ("%2" once took the
    // place of a later argument).
    QTest::newRow("larger than the queue's byte limit, % in the id")
        << QByteArray("10000 100 drop-head") << qint64(0) << QByteArray() << QByteArray("m%2 101")
        << QByteArray("Error: Message m%2 of 101 bytes exceeds queue 'q' byte limit (100 bytes, "
                      "performance.max_queue_bytes)\n")
        << QByteArray("Error: Message m%2 of 101 bytes exceeds queue 'q' byte limit (100 bytes, "
                      "performance.max_queue_bytes) for message m%2\n");
    QTest::newRow("does not fit the memory budget, % in the id")
        << defaults << qint64(2 << 20) << QByteArray() << QByteArray("m%1 3000000")
        << QByteArray("Error: Message m%1 of 3000000 bytes does not fit in the broker's memory "
                      "budget (0.0 MiB of 2.0 MiB held, performance.memory_budget_mb)\n")
        << QByteArray("Error: Message m%1 of 3000000 bytes does not fit in the broker's memory "
                      "budget (0.0 MiB of 2.0 MiB held, performance.memory_budget_mb) for "
                      "message m%1\n");
    QTest::newRow("memory alarm")
        << defaults << qint64(2 << 20) << QByteArray("m1 1990000") << QByteArray("m2 200000")
        << QByteArray("Error: Memory alarm: the broker holds 1.9 MiB of its 2.0 MiB budget "
                      "(performance.memory_budget_mb): message m2 rejected\n")
        << QByteArray("Error: Memory alarm: the broker holds 1.9 MiB of its 2.0 MiB budget "
                      "(performance.memory_budget_mb): message m2 rejected for message m2\n");
    QTest::newRow("does not fit the memory budget")
        << defaults << qint64(2 << 20) << QByteArray() << QByteArray("m2 3000000")
        << QByteArray("Error: Message m2 of 3000000 bytes does not fit in the broker's memory "
                      "budget (0.0 MiB of 2.0 MiB held, performance.memory_budget_mb)\n")
        << QByteArray("Error: Message m2 of 3000000 bytes does not fit in the broker's memory "
                      "budget (0.0 MiB of 2.0 MiB held, performance.memory_budget_mb) for "
                      "message m2\n");
    QTest::newRow("storage failed")
        << defaults << qint64(0) << QByteArray() << QByteArray("m2 10 rk fail")
        << QByteArray("Error: disk full\n") << QByteArray("Error: disk full for message m2\n");
    QTest::newRow("duplicate") << defaults << qint64(0) << QByteArray("m2 10")
                               << QByteArray("m2 10")
                               << QByteArray("Error: Duplicate message m2 ignored\n")
                               << QByteArray(
                                      "Error: Duplicate message m2 ignored for message m2\n");
    QTest::newRow("unroutable")
        << defaults << qint64(0) << QByteArray() << QByteArray("m2 10 other")
        << QByteArray("Error: No queues bound to exchange 'ex' with routing key 'other'\n")
        << QByteArray("Error: No queues bound to exchange 'ex' with routing key 'other' for "
                      "message m2\n");
}

void tst_Refusals::publishes()
{
    QFETCH(QByteArray, queueSettings);
    QFETCH(qint64, budget);
    QFETCH(QByteArray, first);
    QFETCH(QByteArray, second);
    QFETCH(QByteArray, reply);
    QFETCH(QByteArray, batchReply);
    const QList<QByteArray> settings = queueSettings.split(' ');
    Config::Performance performance;
    performance.maxQueueSize = settings[0].toLongLong();
    performance.maxQueueBytes = settings[1].toLongLong();
    performance.overflowPolicy = QString::fromUtf8(settings[2]);
    test::RouterHarness h(performance, budget);
    h.declareBoundQueue();
    if (!first.isEmpty()) {
        const QList<QByteArray> f = first.split(' ');
        h.publishCommitted(f[0], f[1].toLongLong());
    }
    const QList<QByteArray> s = second.split(' ');
    const QString routingKey = s.size() > 2 ? QString::fromUtf8(s[2]) : QStringLiteral("rk");
    PublishOutcomes outcomes;
    h.publish(s[0], QByteArray(s[1].toLongLong(), 'x'), &outcomes, routingKey);
    if (!h.store.publishes.isEmpty()) {
        if (s.size() > 3)
            h.store.commit(storage::PublishOutcome::Failed, QStringLiteral("disk full"));
        else
            h.store.commitAll();
    }
    QCOMPARE(outcomes.size(), 1);
    QCOMPARE(handlers::publishReplies(outcomes, "ex", routingKey, false), reply);
    QCOMPARE(handlers::publishReplies(outcomes, "ex", routingKey, true), batchReply);
}

void tst_Refusals::rateLimited_data()
{
    QTest::addColumn<int>("roles");
    QTest::addColumn<QString>("bucket");  // the one bucket with 0.5/s and a burst of 1
    QTest::addColumn<QByteArray>("line"); // sent twice: the second is refused
    QTest::addColumn<QByteArray>("reply");

    QTest::newRow("publish, CN publish rate")
        << senderRole << "cn_publish" << QByteArray("publish ex rk " + envelope("m1"))
        << QByteArray("Error: rate limit exceeded: publish rate of CN 'sender_1' is limited to "
                      "0.5/s (burst 1)\n");
    QTest::newRow("publish, IP publish rate")
        << senderRole << "ip_publish" << QByteArray("publish ex rk " + envelope("m1"))
        << QByteArray("Error: rate limit exceeded: publish rate of IP 127.0.0.1 is limited to "
                      "0.5/s (burst 1)\n");
    QTest::newRow("publish_batch, CN publish rate")
        << senderRole << "cn_publish"
        << QByteArray("publish_batch ex rk [" + envelope("m1") + "," + envelope("m2") + "]")
        << QByteArray("Error: rate limit exceeded: publish rate of CN 'sender_1' is limited to "
                      "0.5/s (burst 1) for message m1\n"
                      "Error: rate limit exceeded: publish rate of CN 'sender_1' is limited to "
                      "0.5/s (burst 1) for message m2\n");
    QTest::newRow("publish_batch, IP request rate")
        << senderRole << "ip_global" << QByteArray("publish_batch ex rk [" + envelope("m1") + "]")
        << QByteArray("Error: rate limit exceeded: request rate of IP 127.0.0.1 is limited to "
                      "0.5/s (burst 1) for message m1\n");
    QTest::newRow("declare_queue, CN request rate")
        << receiver << "cn_global" << QByteArray("declare_queue receiver_1_in")
        << QByteArray("Error: rate limit exceeded: request rate of CN 'receiver_1' is limited to "
                      "0.5/s (burst 1)\n");
}

void tst_Refusals::rateLimited()
{
    QFETCH(int, roles);
    QFETCH(QString, bucket);
    QFETCH(QByteArray, line);
    QFETCH(QByteArray, reply);
    Config::RateLimit limits;
    limits.enabled = true;
    limits.globalRps = limits.ipGlobalRps = limits.publishRps = limits.ipPublishRps = 1000;
    limits.globalBurst = limits.ipGlobalBurst = limits.publishBurst = limits.ipPublishBurst = 1000;
    const auto tight = [&bucket](const char *name, double &rps, double &burst) {
        if (bucket == QLatin1String(name)) {
            rps = 0.5;
            burst = 1;
        }
    };
    tight("cn_global", limits.globalRps, limits.globalBurst);
    tight("ip_global", limits.ipGlobalRps, limits.ipGlobalBurst);
    tight("cn_publish", limits.publishRps, limits.publishBurst);
    tight("ip_publish", limits.ipPublishRps, limits.ipPublishBurst);
    DispatcherHarness h(Roles(Role(roles)), limits);
    const QByteArray first = h.run(line); // the clock stands still: no token comes back
    QVERIFY2(!first.contains("rate limit"), first.constData());
    QCOMPARE(h.run(line), reply);
}

QTEST_GUILESS_MAIN(tst_Refusals)
#include "tst_refusals.moc"
