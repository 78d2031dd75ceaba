#include "publisher.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "payload.h"

namespace cmq::bench {

namespace {
// How long a publisher waiting for confirms goes without looking at the stop flag.
constexpr qint64 kStopCheckUs = 200'000;
} // namespace

Publisher::Publisher(const BenchOptions &options, int index, RunState &state,
                     std::shared_ptr<SSL_CTX> context)
    : m_options(options), m_state(state), m_index(index), m_socket(std::move(context))
{
    m_head = "publish " + options.exchange() + " " + options.routingKey() +
             " {\"message_id\":\"b-" + options.runId.toUtf8() + "-" + QByteArray::number(index) +
             "-";
    // Random bytes stand in for ciphertext: the broker cannot tell the difference, which is the
    // point.
    const QByteArray ciphertext = randomCiphertextField(options.messageBytes);
    m_tail = "\",\"receiver_client_id\":\"" + options.receiver.toUtf8() +
             "\",\"enc_session_key\":\"" + QByteArray(108, 'k') +
             "\",\"nonce\":\"bm9uY2Vub25jZTEy\",\"ciphertext\":\"" + ciphertext + "\",\"t\":";
}

void Publisher::run()
{
    if (!m_socket.open(m_options.host, m_options.port)) {
        qWarning("publisher: %s", qPrintable(m_socket.errorString()));
        ++m_state.publishersConnected; // so that the others do not wait for this one
        finish(true);
        return;
    }
    // Publishing starts when every publisher has its connection, so a run with many publishers
    // measures publishing, not TLS handshakes (the other load generator connects before it
    // starts).
    ++m_state.publishersConnected;
    while (m_state.publishersConnected.load() < m_options.publishers)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (m_options.rate > 0) {
        // Publishers take turns: publisher i starts i periods of the total rate later.
        m_ratePeriodUs = 1e6 * m_options.publishers / m_options.rate;
        m_rateStartUs = nowMicros() + qint64(m_index * 1e6 / m_options.rate);
    }
    const auto onLine = [this](QByteArrayView line) { this->onLine(line); };
    for (bool more = true;;) {
        if (more) {
            const Fill filled = fill();
            if (filled == Fill::Failed) {
                qWarning("publisher: %s", qPrintable(m_socket.errorString()));
                finish(true);
                return;
            }
            more = filled == Fill::More;
        }
        // The run is over without these confirms (another connection failed, or time ran out).
        if ((!more && m_sentAt.empty()) || m_state.abandon.load(std::memory_order_relaxed))
            break;
        qint64 timeout = kStopCheckUs;
        if (more && qsizetype(m_sentAt.size()) < m_options.window) {
            const qint64 due = untilNextDue(nowMicros());
            if (due >= 0)
                timeout = std::min(timeout, due);
        }
        if (m_socket.readLines(timeout, onLine) == TlsLineSocket::ReadResult::Closed) {
            qWarning("publisher: %s", qPrintable(m_socket.errorString()));
            finish(true);
            return;
        }
    }
    m_socket.close();
    finish(false);
}

void Publisher::finish(bool failed)
{
    if (failed)
        ++m_state.failures;
    ++m_state.publishersDone;
}

qint64 Publisher::untilNextDue(qint64 now) const
{
    if (m_ratePeriodUs == 0)
        return -1;
    const qint64 due = m_rateStartUs + qint64(double(m_sequence) * m_ratePeriodUs);
    return std::max<qint64>(0, due - now);
}

bool Publisher::takeBudget()
{
    if (m_state.stopPublishing.load(std::memory_order_relaxed))
        return false;
    if (m_options.count > 0 && m_state.budget.fetch_sub(1) <= 0)
        return false;
    return true;
}

Publisher::Fill Publisher::fill()
{
    m_out.resize(0); // keeps the capacity for the next fill
    bool more = true;
    for (qint64 now = nowMicros(); qsizetype(m_sentAt.size()) < m_options.window;
         now = nowMicros()) {
        if (untilNextDue(now) > 0)
            break;
        if (!takeBudget()) {
            more = false;
            break;
        }
        storeFirst(m_state.firstPublishUs, now);
        m_out += m_head;
        m_out += QByteArray::number(m_sequence++);
        m_out += m_tail;
        m_out += QByteArray::number(now);
        m_out += "}\n";
        m_sentAt.push_back(now);
    }
    if (!m_socket.writeAll(m_out))
        return Fill::Failed;
    return more ? Fill::More : Fill::Done;
}

void Publisher::onLine(QByteArrayView line)
{
    if (m_sentAt.empty())
        return;
    const qint64 now = nowMicros();
    if (line.startsWith("ACK ")) {
        m_latency.record(now - m_sentAt.front());
        ++m_state.confirmed;
        m_state.lastConfirmUs.store(now, std::memory_order_relaxed);
    } else {
        if (m_state.refused.fetch_add(1) < 5)
            qWarning("publish refused: %.*s", int(line.size()), line.data());
    }
    m_sentAt.pop_front();
}

} // namespace cmq::bench
