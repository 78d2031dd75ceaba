#pragma once
// One consuming connection: qos, consume, ack every delivery, record end-to-end latency from
// the send time each message carries.

#include <QObject>

#include "benchoptions.h"
#include "latencyhistogram.h"
#include "lineconnection.h"
#include "runstate.h"

namespace cmq::bench {

class Consumer : public QObject
{
    Q_OBJECT

public:
    Consumer(const BenchOptions &options, RunState &state);
    void start();
    const LatencyHistogram &endToEndLatency() const { return m_latency; }

private:
    void onLine(QByteArrayView line);

    const BenchOptions &m_options;
    RunState &m_state;
    LineConnection *m_connection;
    bool m_subscribed = false;
    LatencyHistogram m_latency;
};

} // namespace cmq::bench
