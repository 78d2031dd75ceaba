#pragma once
// What publishers, consumers and the main thread share during a run: atomics only.

#include <atomic>
#include <chrono>

#include <QtGlobal>

namespace cmq::bench {

inline qint64 nowMicros()
{
    using namespace std::chrono;
    return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

struct RunState
{
    std::atomic<bool> stopPublishing{false};
    std::atomic<bool> abandon{false}; // the run is over: publishers stop waiting for confirms
    std::atomic<qint64> budget{0};     // messages left to publish when count-limited
    std::atomic<qint64> confirmed{0};  // "ACK <id>" received
    std::atomic<qint64> refused{0};    // "Error: ..." received for a publish
    std::atomic<qint64> delivered{0};
    std::atomic<qint64> firstPublishUs{0};
    std::atomic<qint64> lastConfirmUs{0};
    std::atomic<qint64> firstDeliveryUs{0};
    std::atomic<qint64> subscribedUs{0}; // the first consumer's subscription confirmed
    std::atomic<qint64> lastDeliveryUs{0};
    std::atomic<int> consumersReady{0};
    std::atomic<int> publishersConnected{0}; // publishing starts when all are
    std::atomic<int> publishersDone{0};
    std::atomic<int> failures{0};
};

inline void storeFirst(std::atomic<qint64> &slot, qint64 value)
{
    qint64 expected = 0;
    slot.compare_exchange_strong(expected, value);
}

} // namespace cmq::bench
