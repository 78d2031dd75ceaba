// cmq reply-echo: a tiny responder for demos and tests: answers every request with its own
// text (after an optional prefix).

#include <QCommandLineParser>

#include "clientsettings.h"
#include "command.h"

namespace cmq::cli {
namespace {

const QByteArray Usage =
    QByteArray(
        "Usage: cmq reply-echo [options]\n\n"
        "Listens like `cmq listen` and answers every request with the request's text, after\n"
        "--prefix when given. Plain messages are acknowledged and ignored. Prints one line per\n"
        "answered request: the request's message id.\n\n"
        "Options:\n"
        "  --prefix TEXT  put TEXT before each answer\n"
        "  --count N      exit after answering N requests (once the answers are confirmed)\n"
        "  --timeout S    exit after S seconds\n\n") +
    ConnectionFlags::help();

int runReplyEcho(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption prefix(QStringLiteral("prefix"), QString(), QStringLiteral("text"));
    const QCommandLineOption count(QStringLiteral("count"), QString(), QStringLiteral("n"));
    const QCommandLineOption timeout(QStringLiteral("timeout"), QString(), QStringLiteral("s"));
    parser.addOptions({prefix, count, timeout});
    const ConnectionFlags connection;
    connection.addTo(parser);
    if (const int code = parseCommandLine(parser, args, "reply-echo", Usage); code >= 0)
        return code;
    if (!parser.positionalArguments().isEmpty())
        return fail(
            "reply-echo",
            QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()),
            ExitUsage);
    int maxRequests = 0;
    if (parser.isSet(count)) {
        bool ok = false;
        maxRequests = parser.value(count).toInt(&ok);
        if (!ok || maxRequests <= 0)
            return fail("reply-echo", QStringLiteral("--count must be a positive number"),
                        ExitUsage);
    }
    int timeoutMs = -1;
    if (parser.isSet(timeout) && !parseSeconds(parser.value(timeout), &timeoutMs))
        return fail("reply-echo", QStringLiteral("--timeout must be a positive number of seconds"),
                    ExitUsage);
    auto settings = connection.resolve(parser, true);
    if (!settings)
        return fail("reply-echo", settings.error(), ExitUsage);
    auto made = makeClient(settings.value());
    if (!made)
        return fail("reply-echo", made.error(), ExitFailure);
    client::BlockingClient &blocking = *made.value();
    if (const Status connected = blocking.connect(settings->connectTimeoutMs); !connected)
        return fail("reply-echo", connected.error(), ExitUnreachable);

    const QByteArray head = parser.value(prefix).toUtf8();
    int answered = 0;
    const auto served = blocking.serve(
        [&](const client::IncomingMessage &message) -> std::optional<QByteArray> {
            if (message.kind != client::MessageKind::Request)
                return std::nullopt;
            ++answered;
            writeOut(message.messageId.toUtf8() + '\n');
            if (maxRequests > 0 && answered >= maxRequests)
                blocking.stopServing();
            return head + message.payload;
        },
        0, timeoutMs);
    if (!served)
        return fail("reply-echo", served.error(), ExitFailure);
    // The answers are in the outbox; leave only once the broker has them.
    if (const Status sent = blocking.waitForOutbox(30000); !sent)
        return fail("reply-echo", sent.error(), ExitFailure);
    return ExitOk;
}

const CommandRegistration registration({QStringLiteral("reply-echo"),
                                        QStringLiteral("answer every request with its own text"),
                                        &runReplyEcho});

} // namespace
} // namespace cmq::cli
