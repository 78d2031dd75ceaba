#pragma once
// One consuming connection on a thread of its own: qos, consume, ack every delivery, record
// end-to-end latency from the send time each message carries. The same blocking loop as a
// publisher's (tlslinesocket.h says why).

#include <memory>

#include <QByteArray>
#include <QByteArrayView>

#include "benchoptions.h"
#include "latencyhistogram.h"
#include "runstate.h"
#include "tlslinesocket.h"

namespace cmq::bench {

class Consumer
{
public:
    Consumer(const BenchOptions &options, RunState &state, std::shared_ptr<SSL_CTX> context);
    // Connects, subscribes and acks deliveries until the run is over. Runs on its own thread.
    void run();
    const LatencyHistogram &endToEndLatency() const { return m_latency; }

private:
    void onLine(QByteArrayView line);

    const BenchOptions &m_options;
    RunState &m_state;
    TlsLineSocket m_socket;
    QByteArray m_acks; // the acks for one read's deliveries, sent together
    bool m_subscribed = false;
    QByteArray m_refusal; // an "Error: ..." line before "Subscribed to queue"
    LatencyHistogram m_latency;
};

} // namespace cmq::bench
