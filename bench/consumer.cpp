#include "consumer.h"

namespace cmq::bench {

Consumer::Consumer(const BenchOptions &options, RunState &state)
    : m_options(options), m_state(state),
      m_connection(new LineConnection(options.certDir, options.receiver, this))
{
    m_connection->onConnected = [this] {
        const QByteArray queue = m_options.queue();
        m_connection->write("qos " + QByteArray::number(m_options.prefetch) + "\nconsume " + queue
                            + "\n");
    };
    m_connection->onLine = [this](QByteArrayView line) { onLine(line); };
    m_connection->onError = [this](const QString &error) {
        qWarning("consumer: %s", qPrintable(error));
        ++m_state.failures;
    };
}

void Consumer::start()
{
    m_connection->open(m_options.host, m_options.port);
}

void Consumer::onLine(QByteArrayView line)
{
    if (!line.startsWith("Message: ")) {
        if (!m_subscribed && line == "Subscribed to queue") {
            m_subscribed = true;
            storeFirst(m_state.subscribedUs, nowMicros());
            ++m_state.consumersReady;
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
    // Acks go out right away, pipelined; their replies are not waited for.
    QByteArray ack;
    ack.reserve(id.size() + 5);
    ack += "ack ";
    ack += id;
    ack += '\n';
    m_connection->write(ack);
}

} // namespace cmq::bench
