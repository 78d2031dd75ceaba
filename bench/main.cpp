// ciphermq-bench: P publishers and C consumers over mTLS against a running broker; reports
// publish-confirm and delivery throughput, end-to-end latency percentiles and broker RSS.
// Usage and recorded results: bench/README.md.

#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSslSocket>
#include <QTimer>

#include "benchoptions.h"
#include "consumer.h"
#include "publisher.h"
#include "tls/tlsidentity.h"

using namespace cmq::bench;

// The receiver's topology, set up synchronously before the run.
static bool declareTopology(const BenchOptions &o)
{
    const QDir dir(o.certDir);
    const auto config = cmq::tls::clientConfiguration(cmq::tls::TlsFiles{
        dir.filePath(o.receiver + ".crt"), dir.filePath(o.receiver + ".key"),
        dir.filePath("ca.crt")});
    if (!config) {
        std::fprintf(stderr, "ciphermq-bench: %s\n", qPrintable(config.error()));
        return false;
    }
    QSslSocket socket;
    socket.setSslConfiguration(config.value());
    socket.connectToHostEncrypted(o.host, o.port);
    if (!socket.waitForEncrypted(15000)) {
        std::fprintf(stderr, "ciphermq-bench: cannot connect: %s\n",
                     qPrintable(socket.errorString()));
        return false;
    }
    const QByteArray queue = o.queue();
    const QList<QByteArray> requests = {
        "declare_queue " + queue,
        "declare_exchange " + o.exchange() + (o.topic ? " topic" : ""),
        "bind " + queue + " " + o.exchange() + " " + o.bindingKey()};
    for (const QByteArray &request : requests) {
        socket.write(request + '\n');
        while (!socket.canReadLine()) {
            if (!socket.waitForReadyRead(15000)) {
                std::fprintf(stderr, "ciphermq-bench: no reply to %s\n", request.constData());
                return false;
            }
        }
        const QByteArray reply = socket.readLine().trimmed();
        if (reply.startsWith("Error") || reply.startsWith("Missing")) {
            std::fprintf(stderr, "ciphermq-bench: %s: %s\n", request.constData(),
                         reply.constData());
            return false;
        }
    }
    socket.disconnectFromHost();
    return true;
}

static qint64 rssKiB(qint64 pid)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    }
    return 0;
}

int main(int argc, char *argv[])
{
    // The connections write with OpenSSL on plain descriptors: a broker that goes away must fail
    // the write (and the run), not kill the process with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    QCoreApplication app(argc, argv);
    const auto parsed = parseOptions(app.arguments());
    if (!parsed) {
        std::fprintf(stderr, "%s\n", qPrintable(parsed.error()));
        return 2;
    }
    const BenchOptions options = parsed.value();
    if (!declareTopology(options))
        return 1;

    QString error;
    const std::shared_ptr<SSL_CTX> publisherTls =
        loadClientContext(options.certDir, options.sender, &error);
    const std::shared_ptr<SSL_CTX> consumerTls =
        loadClientContext(options.certDir, options.receiver, &error);
    if (!publisherTls || !consumerTls) {
        std::fprintf(stderr, "ciphermq-bench: %s\n", qPrintable(error));
        return 1;
    }

    // Every publisher and consumer is a thread of its own; the main thread's event loop only
    // watches the run (tick below).
    RunState state;
    state.budget = options.count;
    std::vector<std::unique_ptr<Publisher>> publishers;
    std::vector<std::unique_ptr<Consumer>> consumers;
    std::vector<std::thread> threads;
    const auto spawnConsumers = [&] {
        for (int i = 0; i < options.consumers; ++i) {
            consumers.push_back(std::make_unique<Consumer>(options, state, consumerTls));
            threads.emplace_back(&Consumer::run, consumers.back().get());
        }
    };
    // A drain run (--backlog) attaches its consumers only once the whole backlog is confirmed.
    const bool drainRun = options.backlog > 0;
    if (!drainRun)
        spawnConsumers();

    qint64 maxRss = 0;
    qint64 startedUs = 0;
    bool publishing = false;
    QTimer tick;
    tick.setInterval(100);
    QObject::connect(&tick, &QTimer::timeout, &app, [&] {
        if (options.brokerPid > 0)
            maxRss = std::max(maxRss, rssKiB(options.brokerPid));
        const qint64 now = nowMicros();
        // Before anything else: a consumer that failed before subscribing would otherwise be
        // waited for below for ever.
        if (state.failures.load() > 0) {
            app.quit();
            return;
        }
        if (!publishing) {
            if (!drainRun && state.consumersReady.load() < options.consumers)
                return;
            publishing = true;
            startedUs = now;
            for (int i = 0; i < options.publishers; ++i) {
                publishers.push_back(std::make_unique<Publisher>(options, i, state, publisherTls));
                threads.emplace_back(&Publisher::run, publishers.back().get());
            }
            return;
        }
        if (state.publishersConnected.load() < options.publishers)
            startedUs = now; // the duration counts from when all publishers are connected
        if (options.count == 0 && double(now - startedUs) / 1e6 >= options.durationSec)
            state.stopPublishing = true;
        const bool published = state.publishersDone.load() >= options.publishers;
        if (drainRun && published && consumers.empty() && options.consumers > 0) {
            spawnConsumers();
            return;
        }
        const bool drained = options.consumers == 0
                             || state.delivered.load() >= state.confirmed.load();
        const bool drainTimedOut = published && now - state.lastDeliveryUs.load() > 30'000'000
                                   && now - state.lastConfirmUs.load() > 30'000'000;
        if ((published && drained) || drainTimedOut)
            app.quit();
    });
    tick.start();
    app.exec();

    state.stopPublishing = true;
    state.abandon = true;
    for (std::thread &thread : threads)
        thread.join();
    LatencyHistogram confirm, endToEnd;
    for (const auto &p : publishers)
        confirm.merge(p->confirmLatency());
    for (const auto &c : consumers)
        endToEnd.merge(c->endToEndLatency());

    const double publishSec = double(state.lastConfirmUs - state.firstPublishUs) / 1e6;
    const double deliverSec = double(state.lastDeliveryUs - state.firstPublishUs) / 1e6;
    const double publishRate = publishSec > 0 ? double(state.confirmed) / publishSec : 0;
    const double deliverRate = deliverSec > 0 ? double(state.delivered) / deliverSec : 0;
    const double drainSec = double(state.lastDeliveryUs - state.subscribedUs) / 1e6;
    const double drainRate = drainRun && drainSec > 0 ? double(state.delivered) / drainSec : 0;
    QJsonObject result{
        {"publishers", options.publishers}, {"consumers", options.consumers},
        {"size", options.messageBytes}, {"window", options.window},
        {"prefetch", options.prefetch}, {"confirmed", double(state.confirmed)},
        {"refused", double(state.refused)}, {"delivered", double(state.delivered)},
        {"publish_rate", qRound(publishRate)}, {"deliver_rate", qRound(deliverRate)},
        {"drain_rate", qRound(drainRate)}, {"rate", options.rate},
        {"confirm_p50_ms", confirm.percentileMs(50)}, {"confirm_p99_ms", confirm.percentileMs(99)},
        {"e2e_p50_ms", endToEnd.percentileMs(50)}, {"e2e_p99_ms", endToEnd.percentileMs(99)},
        {"e2e_p999_ms", endToEnd.percentileMs(99.9)}, {"broker_max_rss_mb", double(maxRss) / 1024},
        {"failures", state.failures.load()}};
    if (options.json) {
        std::printf("%s\n", QJsonDocument(result).toJson(QJsonDocument::Compact).constData());
    } else {
        std::printf("publishers %d, consumers %d, %d-byte ciphertext (before base64), window %d, "
                    "prefetch %d\n",
                    options.publishers, options.consumers, options.messageBytes, options.window,
                    options.prefetch);
        std::printf("confirmed %lld, refused %lld, delivered %lld\n",
                    qlonglong(state.confirmed.load()), qlonglong(state.refused.load()),
                    qlonglong(state.delivered.load()));
        std::printf("publish→ACK   %9.0f msg/s   p50 %.2f ms   p99 %.2f ms\n", publishRate,
                    confirm.percentileMs(50), confirm.percentileMs(99));
        std::printf("delivery      %9.0f msg/s   end-to-end p50 %.2f ms   p99 %.2f ms   "
                    "p99.9 %.2f ms\n",
                    deliverRate, endToEnd.percentileMs(50), endToEnd.percentileMs(99),
                    endToEnd.percentileMs(99.9));
        if (drainRun)
            std::printf("drain of %lld   %9.0f msg/s\n", qlonglong(options.backlog), drainRate);
        if (options.brokerPid > 0)
            std::printf("broker RSS max %.1f MB\n", double(maxRss) / 1024);
    }
    const bool complete = state.failures == 0 && state.refused == 0
                          && (options.consumers == 0 || state.delivered >= state.confirmed);
    return complete ? 0 : 1;
}
