// A small service process for the client library's multi-process tests, built on the library
// (cmq covers the command line; this covers what a service does in code). Modes:
//
//   chain  --name N --next M [--origin --count K]
//       A link of a chain: every message received is enriched (the link appends its name and a
//       step of its own to the payload's trail) and sent on to M. The origin starts K messages
//       and, when they come back round, prints each returned payload as one line and exits 0.
//   stream --to M --outbox DIR --count K [--from I] [--delay-ms D] [--burst B]
//       Sends messages I..K-1 with the ids "stream-<i>" (payload "message <i>") through an on-disk
//       outbox, printing "accepted <i>" once each is in the outbox, B every D ms, then waits until
//       the outbox is empty and prints "done". Killing it and starting it again with --from set
//       past the last "accepted" line must deliver every message exactly once.
//
// Common: --broker LIST --cert F --key F --ca F [--identity DIR] [--timeout S]. Prints "ready"
// once connected (and, for chain, subscribed).

#include <cstdio>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTimer>

#include "client/client.h"
#include "client/fileoutbox.h"

using namespace cmq::client;

namespace {

void say(const QByteArray &line)
{
    std::fwrite(line.constData(), 1, size_t(line.size()), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

int die(const QString &message)
{
    std::fprintf(stderr, "cmq_test_service: %s\n", qPrintable(message));
    return 1;
}

// The step each link adds, so the originator can check that every link really processed it.
QJsonObject enrichment(const QString &name, const QJsonObject &payload)
{
    const QJsonArray trail = payload.value(QStringLiteral("trail")).toArray();
    return {{QStringLiteral("by"), name},
            {QStringLiteral("hop"), trail.size()},
            {QStringLiteral("seen"), payload.value(QStringLiteral("text")).toString().size()}};
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addPositionalArgument(QStringLiteral("mode"), QStringLiteral("chain or stream"));
    const QCommandLineOption broker(QStringLiteral("broker"), {}, QStringLiteral("list"));
    const QCommandLineOption cert(QStringLiteral("cert"), {}, QStringLiteral("file"));
    const QCommandLineOption key(QStringLiteral("key"), {}, QStringLiteral("file"));
    const QCommandLineOption ca(QStringLiteral("ca"), {}, QStringLiteral("file"));
    const QCommandLineOption identity(QStringLiteral("identity"), {}, QStringLiteral("keyfile"));
    const QCommandLineOption name(QStringLiteral("name"), {}, QStringLiteral("name"));
    const QCommandLineOption next(QStringLiteral("next"), {}, QStringLiteral("name"));
    const QCommandLineOption origin(QStringLiteral("origin"));
    const QCommandLineOption count(QStringLiteral("count"), {}, QStringLiteral("n"), "0");
    const QCommandLineOption to(QStringLiteral("to"), {}, QStringLiteral("name"));
    const QCommandLineOption outbox(QStringLiteral("outbox"), {}, QStringLiteral("dir"));
    const QCommandLineOption from(QStringLiteral("from"), {}, QStringLiteral("i"), "0");
    const QCommandLineOption delay(QStringLiteral("delay-ms"), {}, QStringLiteral("ms"), "0");
    const QCommandLineOption burst(QStringLiteral("burst"), {}, QStringLiteral("n"), "1");
    const QCommandLineOption timeout(QStringLiteral("timeout"), {}, QStringLiteral("s"), "60");
    parser.addOptions({broker, cert, key, ca, identity, name, next, origin, count, to, outbox, from,
                       delay, burst, timeout});
    parser.process(app);
    const QString mode = parser.positionalArguments().value(0);

    ClientOptions options;
    const auto brokers = parseBrokerList(parser.value(broker));
    if (!brokers)
        return die(brokers.error());
    options.brokers = brokers.value();
    options.tls = {parser.value(cert), parser.value(key), parser.value(ca)};
    options.keyPairPath = parser.value(identity);
    options.heartbeatSec = 2;
    options.backoffInitialMs = 100;
    options.backoffMaxMs = 1000;
    options.retryDelayMs = 200;

    std::unique_ptr<OutboxStore> store;
    if (parser.isSet(outbox)) {
        auto opened = FileOutbox::open(parser.value(outbox));
        if (!opened)
            return die(opened.error());
        store = std::move(opened).value();
    }
    Client client(options, std::move(store));
    QObject::connect(&client, &Client::errorOccurred, &app,
                     [](const QString &error) { die(error); });
    QTimer::singleShot(parser.value(timeout).toInt() * 1000, &app, [] {
        die(QStringLiteral("timed out"));
        QCoreApplication::exit(1);
    });

    const int total = parser.value(count).toInt();
    if (mode == u"chain") {
        const QString me = parser.value(name);
        const QString nextHop = parser.value(next);
        const bool isOrigin = parser.isSet(origin);
        QSet<QString> finished; // ids of chains that came back (redeliveries count once)
        QObject::connect(&client, &Client::messageStateChanged, &app,
                         [](const QString &id, MessageState state, const QString &detail) {
                             if (state == MessageState::Failed)
                                 die(id + QStringLiteral(" failed: ") + detail);
                         });
        const Client::Handler handler =
            [&](const IncomingMessage &message) -> std::optional<QByteArray> {
            QJsonObject payload = QJsonDocument::fromJson(message.payload).object();
            QJsonArray trail = payload.value(QStringLiteral("trail")).toArray();
            if (isOrigin) {
                const QString chain = payload.value(QStringLiteral("chain")).toString();
                if (finished.contains(chain))
                    return std::nullopt;
                finished.insert(chain);
                trail.append(enrichment(me, payload));
                payload.insert(QStringLiteral("trail"), trail);
                say(QJsonDocument(payload).toJson(QJsonDocument::Compact));
                if (finished.size() == total)
                    QTimer::singleShot(0, &app, [] { QCoreApplication::exit(0); });
                return std::nullopt;
            }
            trail.append(enrichment(me, payload));
            payload.insert(QStringLiteral("trail"), trail);
            // The chain id keeps the hop's message id stable, so a redelivered message is
            // forwarded under the same id and the next link sees it once.
            SendOptions forward;
            forward.messageId =
                QStringLiteral("%1-%2-%3")
                    .arg(me, payload.value(QStringLiteral("chain")).toString(), nextHop);
            if (const auto sent = client.send(
                    nextHop, QJsonDocument(payload).toJson(QJsonDocument::Compact), forward);
                !sent)
                die(sent.error());
            return std::nullopt;
        };
        if (const auto listening = client.listen(handler); !listening)
            return die(listening.error());
        QObject::connect(&client, &Client::subscribed, &app, [&] {
            say("ready");
            if (!isOrigin)
                return;
            for (int i = 0; i < total; ++i) {
                const QString chain = QStringLiteral("c%1").arg(i);
                const QJsonObject payload{
                    {QStringLiteral("chain"), chain},
                    {QStringLiteral("text"), QStringLiteral("order %1 from %2").arg(i).arg(me)},
                    {QStringLiteral("trail"), QJsonArray{QJsonObject{{QStringLiteral("by"), me},
                                                                     {QStringLiteral("hop"), 0}}}}};
                SendOptions start;
                start.messageId = QStringLiteral("%1-%2-%3").arg(me, chain, nextHop);
                if (const auto sent = client.send(
                        nextHop, QJsonDocument(payload).toJson(QJsonDocument::Compact), start);
                    !sent)
                    die(sent.error());
            }
        });
        if (const auto started = client.start(); !started)
            return die(started.error());
        return app.exec();
    }

    if (mode == u"stream") {
        const QString receiver = parser.value(to);
        int nextIndex = parser.value(from).toInt();
        const int delayMs = parser.value(delay).toInt();
        QTimer pacer;
        pacer.setInterval(delayMs);
        bool allAccepted = false;
        const auto finishIfDone = [&] {
            if (allAccepted && client.pendingCount() == 0) {
                say("done");
                QCoreApplication::exit(0);
            }
        };
        QObject::connect(&client, &Client::outboxDrained, &app, finishIfDone);
        const int perTick = qMax(1, parser.value(burst).toInt());
        QObject::connect(&pacer, &QTimer::timeout, &app, [&] {
            for (int i = 0; i < perTick; ++i) {
                if (nextIndex >= total) {
                    pacer.stop();
                    allAccepted = true;
                    finishIfDone();
                    return;
                }
                SendOptions send;
                send.messageId = QStringLiteral("stream-%1").arg(nextIndex);
                const auto sent =
                    client.send(receiver, "message " + QByteArray::number(nextIndex), send);
                if (!sent) {
                    die(sent.error());
                    QCoreApplication::exit(1);
                    return;
                }
                say("accepted " + QByteArray::number(nextIndex));
                ++nextIndex;
            }
        });
        QObject::connect(&client, &Client::connected, &app, [&] {
            if (!pacer.isActive() && !allAccepted) {
                say("ready");
                pacer.start();
            }
        });
        if (const auto started = client.start(); !started)
            return die(started.error());
        return app.exec();
    }
    return die(QStringLiteral("unknown mode '%1' (chain or stream)").arg(mode));
}
