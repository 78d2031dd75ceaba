#pragma once
// One publishing connection on a thread of its own: keeps `window` publishes unconfirmed (or,
// with --rate, publishes on a fixed schedule within that window), records publish→ACK latency.
// A plain loop over a blocking TLS socket rather than an event loop (tlslinesocket.h says why).

#include <deque>
#include <memory>

#include <QByteArray>
#include <QByteArrayView>

#include "benchoptions.h"
#include "latencyhistogram.h"
#include "runstate.h"
#include "tlslinesocket.h"

namespace cmq::bench {

class Publisher
{
public:
    Publisher(const BenchOptions &options, int index, RunState &state,
              std::shared_ptr<SSL_CTX> context);
    // Connects, waits for every other publisher to connect, publishes until the run's budget
    // or the stop flag, then waits for the last confirms. Runs on the publisher's own thread.
    void run();
    const LatencyHistogram &confirmLatency() const { return m_latency; }

private:
    enum class Fill { More, Done, Failed };
    // Writes what the window and the schedule allow. Done: nothing more will be published.
    Fill fill();
    void onLine(QByteArrayView line);
    bool takeBudget();
    // Microseconds until the next publish is due (0: due now; -1: not on a schedule).
    qint64 untilNextDue(qint64 now) const;
    void finish(bool failed);

    const BenchOptions &m_options;
    RunState &m_state;
    const int m_index;
    TlsLineSocket m_socket;
    QByteArray m_head; // "publish <exchange> <key> {\"message_id\":\"<prefix>"
    QByteArray m_tail; // rest of the envelope up to the send-time field
    QByteArray m_out;  // the publishes of one fill(), reused
    std::deque<qint64> m_sentAt;
    qint64 m_sequence = 0;
    qint64 m_rateStartUs = 0;  // fixed-rate runs: publish number k is due at start + k * period
    double m_ratePeriodUs = 0; // 0: as fast as the window allows
    LatencyHistogram m_latency;
};

} // namespace cmq::bench
