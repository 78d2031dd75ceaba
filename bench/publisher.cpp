#include "publisher.h"

#include <QRandomGenerator>

namespace cmq::bench {

Publisher::Publisher(const BenchOptions &options, int index, RunState &state)
    : m_options(options), m_state(state),
      m_connection(new LineConnection(options.certDir, options.sender, this))
{
    const QByteArray key = (options.receiver + u'_' + options.queueSuffix).toUtf8();
    m_head = "publish CipherMQ_exchange " + key + " {\"message_id\":\"b-"
             + options.runId.toUtf8() + "-" + QByteArray::number(index) + "-";
    // Random base64 text of the requested size stands in for ciphertext: the broker cannot
    // tell the difference, which is the point.
    QByteArray random(options.messageBytes * 3 / 4 + 3, Qt::Uninitialized);
    QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(random.data()),
                                          random.size() / 4);
    const QByteArray ciphertext = random.toBase64().left(options.messageBytes);
    m_tail = "\",\"receiver_client_id\":\"" + options.receiver.toUtf8()
             + "\",\"enc_session_key\":\"" + QByteArray(108, 'k')
             + "\",\"nonce\":\"bm9uY2Vub25jZTEy\",\"ciphertext\":\"" + ciphertext + "\",\"t\":";
    m_connection->onLine = [this](QByteArrayView line) { onLine(line); };
    m_connection->onConnected = [this] { fill(); };
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
    while (qsizetype(m_sentAt.size()) < m_options.window && takeBudget()) {
        const qint64 now = nowMicros();
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
    if (m_sentAt.empty() && !m_done) {
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
