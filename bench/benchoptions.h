#pragma once
// What one benchmark run does, from the command line.

#include <QString>

#include "util/result.h"

namespace cmq::bench {

struct BenchOptions
{
    QString host = QStringLiteral("127.0.0.1");
    quint16 port = 5671;
    QString certDir;                           // <cn>.crt/.key and ca.crt
    QString sender = QStringLiteral("sender_1");
    QString receiver = QStringLiteral("receiver_1");
    QString queueSuffix = QStringLiteral("bench"); // queue <receiver>_<suffix>, same routing key
    int publishers = 1;
    int consumers = 1;
    int messageBytes = 1024; // ciphertext bytes before base64 (the field is 4/3 of that)
    int window = 256;        // unconfirmed publishes per publisher
    int prefetch = 256;
    double durationSec = 10; // stop publishing after this long...
    qint64 count = 0;        // ...or after this many messages in total (when > 0)
    double rate = 0;         // msg/s in total, spread evenly over the publishers (when > 0)
    qint64 backlog = 0;      // publish this many first, then time the consumers draining them
    qint64 brokerPid = 0;    // sample this process's RSS when set
    QString runId;           // makes message ids unique across runs against one database
    bool json = false;       // one JSON line instead of the table
    // Through the topic exchange "bench_topics" instead of CipherMQ_exchange: the queue bound
    // with "<queue>.*.eu", publishes keyed "<queue>.orders.eu" (bench/topic.sh).
    bool topic = false;

    QByteArray queue() const { return (receiver + u'_' + queueSuffix).toUtf8(); }
    QByteArray exchange() const { return topic ? "bench_topics" : "CipherMQ_exchange"; }
    QByteArray bindingKey() const { return topic ? queue() + ".*.eu" : queue(); }
    QByteArray routingKey() const { return topic ? queue() + ".orders.eu" : queue(); }
};

Result<BenchOptions> parseOptions(const QStringList &arguments);

} // namespace cmq::bench
