#pragma once
// Every broker-wide counter and gauge, and every per-queue figure, written once: the field that
// holds it, its name in the admin snapshot, its Prometheus family and that family's help. The
// snapshot sections ("counters", "totals", "queues") and the Prometheus exposition all walk
// these tables, so adding a metric is one field in its struct (for the router's counts,
// core/routerstats.h; for a queue's, core/queuecounters.h), one row here and the line that
// counts it. Labelled families (per listener, per reason, per bucket) and histograms are built
// in brokermetricsprometheus.cpp: their snapshot form is a total, not the same shape.

#include <QtGlobal>

#include "core/queuecounters.h"
#include "core/routerstats.h"

namespace cmq::metrics {

// Totals since start, over both listeners (the messages_* ones: data listener only). The
// router's own counts are taken as they are; the rest are gathered by BrokerMetrics::counters().
struct Counters
{
    RouterStats router;
    quint64 rateLimited = 0;
    quint64 connectionsOpened = 0;
    quint64 connectionsClosed = 0;
    quint64 connectionsRefused = 0;
    quint64 handshakeFailures = 0;
    quint64 bytesIn = 0;
    quint64 bytesOut = 0;
    quint64 slowEvents = 0;
};

// Every message that reached routing got exactly one of these outcomes.
constexpr quint64 messagesReachedRouting(const Counters &c)
{
    return c.router.routed + c.router.unroutable + c.router.duplicates + c.router.rejected;
}

// Over all reasons; the exposition has it by reason.
constexpr quint64 messagesDeadLettered(const Counters &c)
{
    quint64 n = 0;
    for (const quint64 byReason : c.router.deadLettered)
        n += byReason;
    return n;
}

template <quint64 RouterStats::*Field> constexpr quint64 routerCount(const Counters &c)
{
    return c.router.*Field;
}

template <quint64 Counters::*Field> constexpr quint64 brokerCount(const Counters &c)
{
    return c.*Field;
}

struct CounterSpec
{
    quint64 (*value)(const Counters &);
    const char *snapshotName; // in the snapshot's "counters"
    // The Prometheus counter, or nullptr when the exposition has it as a labelled family.
    const char *prometheusName;
    const char *help;
};

inline constexpr CounterSpec kCounterSpecs[] = {
    {messagesReachedRouting, "messages_published", "ciphermq_messages_published_total",
     "Messages received from publishers that reached routing."},
    {routerCount<&RouterStats::routed>, "messages_routed", "ciphermq_messages_routed_total",
     "Messages stored and enqueued in at least one queue."},
    {routerCount<&RouterStats::unroutable>, "messages_unroutable",
     "ciphermq_messages_unroutable_total",
     "Messages refused because no queue was bound for their routing key."},
    {routerCount<&RouterStats::duplicates>, "messages_duplicate",
     "ciphermq_messages_duplicate_total",
     "Messages refused because their message id was already known."},
    {routerCount<&RouterStats::rejected>, "messages_rejected", "ciphermq_messages_rejected_total",
     "Messages refused because a reject-publish queue was full, a queue's byte limit was "
     "smaller than the message, the memory alarm was on, or storage failed."},
    {routerCount<&RouterStats::delivered>, "messages_delivered",
     "ciphermq_messages_delivered_total",
     "Deliveries to consumers and fetches, redeliveries included."},
    {routerCount<&RouterStats::redelivered>, "messages_redelivered",
     "ciphermq_messages_redelivered_total",
     "Deliveries of messages that had been delivered before without an ack."},
    {routerCount<&RouterStats::acknowledged>, "messages_acknowledged",
     "ciphermq_messages_acknowledged_total", "Deliveries acknowledged by their consumer."},
    {routerCount<&RouterStats::evicted>, "messages_evicted", "ciphermq_messages_evicted_total",
     "Messages dropped from the head of a full drop-head queue."},
    {routerCount<&RouterStats::expired>, "messages_expired", "ciphermq_messages_expired_total",
     "Messages dropped undelivered once past their queue's or their own TTL."},
    {routerCount<&RouterStats::nackDropped>, "messages_nack_dropped",
     "ciphermq_messages_nack_dropped_total", "Deliveries negatively acknowledged without requeue."},
    {routerCount<&RouterStats::ackTimeouts>, "ack_timeouts", "ciphermq_ack_timeouts_total",
     "Deliveries requeued because their ack did not come in time."},
    {messagesDeadLettered, "messages_dead_lettered", nullptr, nullptr}, // by reason
    {routerCount<&RouterStats::deadLettersRequeued>, "dead_letters_requeued",
     "ciphermq_dead_letters_requeued_total",
     "Dead letters an admin sent back to the queues they came from."},
    {brokerCount<&Counters::rateLimited>, "rate_limited", nullptr, nullptr}, // by scope and bucket
    {brokerCount<&Counters::connectionsOpened>, "connections_opened", nullptr,
     nullptr}, // by listener
    {brokerCount<&Counters::connectionsClosed>, "connections_closed", nullptr, nullptr},
    {brokerCount<&Counters::connectionsRefused>, "connections_refused", nullptr,
     nullptr}, // and reason
    {brokerCount<&Counters::handshakeFailures>, "tls_handshake_failures", nullptr, nullptr},
    {brokerCount<&Counters::bytesIn>, "bytes_received", "ciphermq_received_bytes_total",
     "Bytes of requests read from clients (after TLS)."},
    {brokerCount<&Counters::bytesOut>, "bytes_sent", "ciphermq_sent_bytes_total",
     "Bytes of replies and deliveries written to clients (before TLS)."},
    {brokerCount<&Counters::slowEvents>, "slow_consumer_events",
     "ciphermq_slow_consumer_events_total",
     "Times a connection's unsent output went over server.output_buffer_bytes, stopping its "
     "deliveries."},
};

// What the broker holds right now.
struct Totals
{
    qint64 connections = 0; // data listener
    qint64 adminConnections = 0;
    qint64 consumers = 0;
    qint64 queues = 0;
    qint64 exchanges = 0;
    qint64 bindings = 0;
    qint64 messagesReady = 0;
    qint64 messagesUnacked = 0;
    qint64 messageBytes = 0;
};

struct GaugeSpec
{
    qint64 Totals::*field;
    const char *snapshotName;   // in the snapshot's "totals"
    const char *prometheusName; // nullptr: the exposition has it as a labelled family
    const char *help;
};

inline constexpr GaugeSpec kTotalSpecs[] = {
    {&Totals::connections, "connections", nullptr, nullptr}, // ciphermq_connections{listener,role}
    {&Totals::adminConnections, "admin_connections", nullptr, nullptr},
    {&Totals::consumers, "consumers", "ciphermq_consumers", "Consumers over all queues."},
    {&Totals::queues, "queues", "ciphermq_queues", "Queues declared."},
    {&Totals::exchanges, "exchanges", "ciphermq_exchanges", "Exchanges declared."},
    {&Totals::bindings, "bindings", "ciphermq_bindings", "Bindings."},
    {&Totals::messagesReady, "messages_ready", "ciphermq_messages_ready",
     "Ready messages over all queues."},
    {&Totals::messagesUnacked, "messages_unacked", "ciphermq_messages_unacked",
     "Unacknowledged deliveries over all queues."},
    {&Totals::messageBytes, "message_bytes", "ciphermq_messages_bytes",
     "Envelope bytes of the ready and unacknowledged messages over all queues."},
};

// One queue's figures (metrics/queuestats.h fills them): what it holds now, sampled, and its
// counters, taken as the queue keeps them (core/queuecounters.h).
struct QueueFigures
{
    qint64 ready = 0;
    qint64 unacked = 0;
    qint64 consumers = 0;
    qint64 bytes = 0; // envelope bytes of ready + unacked messages
    qint64 counted = 1; // 0 while ready and bytes are lower bounds (Queue::figuresExact)
    QueueCounters counters;
};

template <qint64 QueueFigures::*Field> constexpr qint64 queueGauge(const QueueFigures &f)
{
    return f.*Field;
}

template <quint64 QueueCounters::*Field> constexpr qint64 queueCount(const QueueFigures &f)
{
    return qint64(f.counters.*Field);
}

struct QueueFigureSpec
{
    qint64 (*value)(const QueueFigures &);
    const char *snapshotName;   // in each object of the snapshot's "queues"
    const char *prometheusName; // labelled {queue="..."}
    bool counter;               // else a gauge
    const char *help;
};

inline constexpr QueueFigureSpec kQueueFigureSpecs[] = {
    {queueGauge<&QueueFigures::ready>, "ready", "ciphermq_queue_messages_ready", false,
     "Messages waiting in the queue for a consumer."},
    {queueGauge<&QueueFigures::unacked>, "unacked", "ciphermq_queue_messages_unacked", false,
     "Messages delivered from the queue and not yet acknowledged."},
    {queueGauge<&QueueFigures::consumers>, "consumers", "ciphermq_queue_consumers", false,
     "Consumers subscribed to the queue."},
    {queueGauge<&QueueFigures::bytes>, "bytes", "ciphermq_queue_messages_bytes", false,
     "Envelope bytes of the ready and unacknowledged messages."},
    {queueGauge<&QueueFigures::counted>, "counted", "ciphermq_queue_backlog_counted", false,
     "1 when ready and bytes are exact; 0 after a restart until the backlog in the database is "
     "counted (in the background): they are then lower bounds."},
    {queueCount<&QueueCounters::published>, "published", "ciphermq_queue_messages_published_total",
     true, "Messages enqueued in the queue."},
    {queueCount<&QueueCounters::delivered>, "delivered", "ciphermq_queue_messages_delivered_total",
     true, "Deliveries from the queue."},
    {queueCount<&QueueCounters::acknowledged>, "acknowledged",
     "ciphermq_queue_messages_acknowledged_total", true, "Acknowledged deliveries from the queue."},
    {queueCount<&QueueCounters::redelivered>, "redelivered",
     "ciphermq_queue_messages_redelivered_total", true, "Redeliveries from the queue."},
    {queueCount<&QueueCounters::evicted>, "evicted", "ciphermq_queue_messages_evicted_total", true,
     "Messages evicted from the queue when it was full."},
    {queueCount<&QueueCounters::expired>, "expired", "ciphermq_queue_messages_expired_total", true,
     "Messages dropped undelivered from the queue once past their TTL."},
    {queueCount<&QueueCounters::deadLettered>, "dead_lettered",
     "ciphermq_queue_messages_dead_lettered_total", true,
     "Messages the queue sent on to its dead-letter exchange."},
};

// The memory budget (limits/memorybudget.h), as the snapshot's "memory" shows it.
struct MemoryFigures
{
    qint64 budgetBytes = 0;
    qint64 usedBytes = 0;
    qint64 messageBytes = 0;
    qint64 connectionBytes = 0;
    qint64 alarm = 0; // 0 or 1; a boolean in the snapshot
    qint64 alarmsRaised = 0;
    qint64 publishesRefused = 0;
};

struct MemoryFigureSpec
{
    qint64 MemoryFigures::*field;
    const char *snapshotName;
    const char *prometheusName;
    bool counter; // else a gauge
    const char *help;
};

inline constexpr MemoryFigureSpec kMemoryFigureSpecs[] = {
    {&MemoryFigures::budgetBytes, "budget_bytes", "ciphermq_memory_budget_bytes", false,
     "performance.memory_budget_mb in bytes (the automatic value when 0)."},
    {&MemoryFigures::usedBytes, "used_bytes", "ciphermq_memory_used_bytes", false,
     "Bytes the memory budget counts: message bytes plus connection bytes."},
    {&MemoryFigures::messageBytes, "message_bytes", "ciphermq_memory_message_bytes", false,
     "Envelope bytes held, each message once, commits pending included."},
    {&MemoryFigures::connectionBytes, "connection_bytes", "ciphermq_memory_connection_bytes", false,
     "Connections' output not yet taken by the network, sampled every 200 ms."},
    {&MemoryFigures::alarm, "alarm", "ciphermq_memory_alarm", false,
     "1 while the memory alarm is on and publishes are refused."},
    {&MemoryFigures::alarmsRaised, "alarms_raised", "ciphermq_memory_alarms_total", true,
     "Times the memory alarm went on."},
    {&MemoryFigures::publishesRefused, "publishes_refused", "ciphermq_memory_alarm_refusals_total",
     true, "Messages refused because of the memory alarm."},
};

} // namespace cmq::metrics
