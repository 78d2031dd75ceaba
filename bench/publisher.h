#pragma once
// One publishing connection: keeps `window` publishes unconfirmed, records publish→ACK latency.

#include <deque>

#include <QObject>

#include "benchoptions.h"
#include "latencyhistogram.h"
#include "lineconnection.h"
#include "runstate.h"

namespace cmq::bench {

class Publisher : public QObject
{
    Q_OBJECT

public:
    Publisher(const BenchOptions &options, int index, RunState &state);
    void start();
    const LatencyHistogram &confirmLatency() const { return m_latency; }

private:
    void fill();
    void onLine(QByteArrayView line);
    bool takeBudget();

    const BenchOptions &m_options;
    RunState &m_state;
    LineConnection *m_connection;
    QByteArray m_head; // "publish <exchange> <key> {\"message_id\":\"<prefix>"
    QByteArray m_tail; // rest of the envelope up to the send-time field
    std::deque<qint64> m_sentAt;
    qint64 m_sequence = 0;
    bool m_done = false;
    LatencyHistogram m_latency;
};

} // namespace cmq::bench
