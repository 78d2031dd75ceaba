#pragma once
// One publishing connection: keeps `window` publishes unconfirmed (or, with --rate, publishes on
// a fixed schedule within that window), records publish→ACK latency.

#include <deque>

#include <QObject>
#include <QTimer>

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
    bool scheduleAllows(qint64 now) const;
    void beginWhenAllConnected();

    const BenchOptions &m_options;
    RunState &m_state;
    const int m_index;
    LineConnection *m_connection;
    QByteArray m_head; // "publish <exchange> <key> {\"message_id\":\"<prefix>"
    QByteArray m_tail; // rest of the envelope up to the send-time field
    std::deque<qint64> m_sentAt;
    qint64 m_sequence = 0;
    qint64 m_rateStartUs = 0;  // fixed-rate runs: publish number k is due at start + k * period
    double m_ratePeriodUs = 0; // 0: as fast as the window allows
    QTimer m_rateTimer;
    bool m_done = false;
    LatencyHistogram m_latency;
};

} // namespace cmq::bench
