#include "consumer.h"

namespace cmq::bench {

namespace {
// How long a consumer waiting for deliveries goes without looking at the end of the run.
constexpr qint64 kStopCheckUs = 200'000;
} // namespace

Consumer::Consumer(const BenchOptions &options, RunState &state, std::shared_ptr<SSL_CTX> context)
    : m_options(options), m_state(state), m_socket(std::move(context))
{
}

void Consumer::run()
{
    const QByteArray subscribe =
        "qos " + QByteArray::number(m_options.prefetch) + "\nconsume " + m_options.queue() + "\n";
    if (!m_socket.open(m_options.host, m_options.port) || !m_socket.writeAll(subscribe)) {
        qWarning("consumer: %s", qPrintable(m_socket.errorString()));
        ++m_state.failures;
        return;
    }
    const auto onLine = [this](QByteArrayView line) { this->onLine(line); };
    while (!m_state.abandon.load(std::memory_order_relaxed)) {
        m_acks.resize(0); // keeps the capacity
        const bool closed =
            m_socket.readLines(kStopCheckUs, onLine) == TlsLineSocket::ReadResult::Closed;
        if (!m_refusal.isEmpty()) { // the broker's reason, rather than the close that follows
            qWarning("consumer: %s", m_refusal.constData());
            ++m_state.failures;
            return;
        }
        if (closed || !m_socket.writeAll(m_acks)) {
            qWarning("consumer: %s", qPrintable(m_socket.errorString()));
            ++m_state.failures;
            return;
        }
    }
    m_socket.close();
}

void Consumer::onLine(QByteArrayView line)
{
    if (!line.startsWith("Message: ")) {
        if (!m_subscribed && line == "Subscribed to queue") {
            m_subscribed = true;
            storeFirst(m_state.subscribedUs, nowMicros());
            ++m_state.consumersReady;
        } else if (!m_subscribed && line.startsWith("Error") && m_refusal.isEmpty()) {
            m_refusal = line.toByteArray();
        }
        return;
    }
    const qint64 now = nowMicros();
    const qsizetype idEnd = line.indexOf(' ', 9);
    const QByteArrayView id = line.sliced(9, idEnd - 9);
    const qsizetype t = line.lastIndexOf("\"t\":");
    if (t > 0) {
        const QByteArrayView digits = line.sliced(t + 4, line.size() - t - 5);
        m_latency.record(now - digits.toLongLong());
    }
    storeFirst(m_state.firstDeliveryUs, now);
    m_state.lastDeliveryUs.store(now, std::memory_order_relaxed);
    ++m_state.delivered;
    // Acks go out pipelined, after the read that brought their deliveries; their replies are
    // not waited for.
    m_acks += "ack ";
    m_acks += id;
    m_acks += '\n';
}

} // namespace cmq::bench
