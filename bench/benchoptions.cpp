#include "benchoptions.h"

#include <QCommandLineParser>
#include <QDateTime>

namespace cmq::bench {

Result<BenchOptions> parseOptions(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Publishes and consumes 1 KB-class envelopes over mTLS against a running CipherMQ broker "
        "and reports publish-confirm and delivery throughput, end-to-end latency and broker RSS."));
    parser.addHelpOption();
    const QCommandLineOption broker({"b", "broker"}, "Broker address.", "host:port",
                                    "127.0.0.1:5671");
    const QCommandLineOption certs("certs", "Folder with <cn>.crt/.key and ca.crt.", "dir");
    const QCommandLineOption sender("sender", "Publisher CN.", "cn", "sender_1");
    const QCommandLineOption receiver("receiver", "Consumer CN.", "cn", "receiver_1");
    const QCommandLineOption publishers({"p", "publishers"}, "Publisher connections.", "n", "1");
    const QCommandLineOption consumers({"c", "consumers"}, "Consumer connections.", "n", "1");
    const QCommandLineOption size({"s", "size"},
                                  "Ciphertext bytes per message, before base64 (the envelope's "
                                  "ciphertext field is 4/3 of that).",
                                  "bytes", "1024");
    const QCommandLineOption window({"w", "window"}, "Unconfirmed publishes per publisher.", "n",
                                    "256");
    const QCommandLineOption prefetch("prefetch", "Consumer prefetch (qos).", "n", "256");
    const QCommandLineOption duration({"d", "duration"}, "Seconds of publishing.", "s", "10");
    const QCommandLineOption count({"n", "count"}, "Total messages (instead of a duration).", "n",
                                   "0");
    const QCommandLineOption rate("rate",
                                  "Publish at this many msg/s in total, spread evenly over the "
                                  "publishers (fixed-rate latency runs; the window still caps "
                                  "unconfirmed publishes).",
                                  "msg/s", "0");
    const QCommandLineOption backlog("backlog",
                                     "Publish this many messages with no consumer attached, then "
                                     "start the consumers and time the drain.",
                                     "n", "0");
    const QCommandLineOption pid("broker-pid", "Sample this process's RSS.", "pid", "0");
    const QCommandLineOption json("json", "Print one JSON line.");
    const QCommandLineOption topic("topic",
                                   "Bind and publish through the topic exchange bench_topics.");
    parser.addOptions({broker, certs, sender, receiver, publishers, consumers, size, window,
                       prefetch, duration, count, rate, backlog, pid, json, topic});
    if (!parser.parse(arguments))
        return Result<BenchOptions>::failure(parser.errorText());
    if (parser.isSet(QStringLiteral("help"))) {
        return Result<BenchOptions>::failure(parser.helpText());
    }

    BenchOptions o;
    const QString address = parser.value(broker);
    const qsizetype colon = address.lastIndexOf(u':');
    o.host = address.left(colon);
    o.port = quint16(address.mid(colon + 1).toUInt());
    o.certDir = parser.value(certs);
    o.sender = parser.value(sender);
    o.receiver = parser.value(receiver);
    o.publishers = parser.value(publishers).toInt();
    o.consumers = parser.value(consumers).toInt();
    o.messageBytes = parser.value(size).toInt();
    o.window = parser.value(window).toInt();
    o.prefetch = parser.value(prefetch).toInt();
    o.durationSec = parser.value(duration).toDouble();
    o.count = parser.value(count).toLongLong();
    o.rate = parser.value(rate).toDouble();
    o.backlog = parser.value(backlog).toLongLong();
    if (o.backlog > 0)
        o.count = o.backlog;
    o.brokerPid = parser.value(pid).toLongLong();
    o.json = parser.isSet(json);
    o.topic = parser.isSet(topic);
    o.runId = QString::number(QDateTime::currentMSecsSinceEpoch(), 36);
    o.queueSuffix = QStringLiteral("bench_") + o.runId;
    if (o.certDir.isEmpty() || o.port == 0 || o.publishers < 1 || o.consumers < 0
        || o.messageBytes < 1 || o.window < 1 || o.rate < 0 || o.backlog < 0)
        return Result<BenchOptions>::failure(QStringLiteral("bad options; see --help"));
    return o;
}

} // namespace cmq::bench
