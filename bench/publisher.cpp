#include "publisher.h"

#include "payload.h"

namespace cmq::bench {

Publisher::Publisher(const BenchOptions &options, int index, RunState &state)
    : m_options(options), m_state(state), m_index(index),
      m_connection(new LineConnection(options.certDir, options.sender, this)), m_rateTimer(this)
{
    m_head = "publish " + options.exchange() + " " + options.routingKey() + " {\"message_id\":\"b-"
             + options.runId.toUtf8() + "-" + QByteArray::number(index) + "-";
    // Random bytes stand in for ciphertext: the broker cannot tell the difference, which is the
    // point.
    const QByteArray ciphertext = randomCiphertextField(options.messageBytes);
    m_tail = "\",\"receiver_client_id\":\"" + options.receiver.toUtf8()
             + "\",\"enc_session_key\":\"" + QByteArray(108, 'k')
             + "\",\"nonce\":\"bm9uY2Vub25jZTEy\",\"ciphertext\":\"" + ciphertext + "\",\"t\":";
    m_connection->onLine = [this](QByteArrayView line) { onLine(line); };
    m_connection->onConnected = [this] {
        ++m_state.publishersConnected;
        beginWhenAllConnected();
    };
    m_connection->onError = [this](const QString &error) {
        if (!m_done) {
            qWarning("publisher: %s", qPrintable(error));
            ++m_state.failures;
            m_done = true;
            ++m_state.publishersDone;
        }
    };
}

void Publisher::start()
{
    m_connection->open(m_options.host, m_options.port);
}

// Publishing starts when every publisher has its connection, so a run with many publishers
// measures publishing, not TLS handshakes (the other load generator connects before it starts).
void Publisher::beginWhenAllConnected()
{
    if (m_state.publishersConnected.load() < m_options.publishers) {
        QTimer::singleShot(1, this, [this] { beginWhenAllConnected(); });
        return;
    }
    if (m_options.rate > 0) {
        // Publishers take turns: publisher i starts i periods of the total rate later.
        m_ratePeriodUs = 1e6 * m_options.publishers / m_options.rate;
        m_rateStartUs = nowMicros() + qint64(m_index * 1e6 / m_options.rate);
        m_rateTimer.setTimerType(Qt::PreciseTimer);
        m_rateTimer.setInterval(1);
        QObject::connect(&m_rateTimer, &QTimer::timeout, this, [this] { fill(); });
        m_rateTimer.start();
    }
    fill();
}

bool Publisher::scheduleAllows(qint64 now) const
{
    return m_ratePeriodUs == 0
           || now >= m_rateStartUs + qint64(double(m_sequence) * m_ratePeriodUs);
}

bool Publisher::takeBudget()
{
    if (m_state.stopPublishing.load(std::memory_order_relaxed))
        return false;
    if (m_options.count > 0 && m_state.budget.fetch_sub(1) <= 0)
        return false;
    return true;
}

void Publisher::fill()
{
    QByteArray out;
    bool more = true;
    for (qint64 now = nowMicros(); qsizetype(m_sentAt.size()) < m_options.window;
         now = nowMicros()) {
        if (!scheduleAllows(now))
            break;
        if (!takeBudget()) {
            more = false;
            break;
        }
        storeFirst(m_state.firstPublishUs, now);
        out += m_head;
        out += QByteArray::number(m_sequence++);
        out += m_tail;
        out += QByteArray::number(now);
        out += "}\n";
        m_sentAt.push_back(now);
    }
    if (!out.isEmpty())
        m_connection->write(out);
    if (!more)
        m_rateTimer.stop();
    if (!more && m_sentAt.empty() && !m_done) {
        m_done = true;
        ++m_state.publishersDone;
    }
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
    fill();
}

} // namespace cmq::bench
