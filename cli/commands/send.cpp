// cmq send: encrypts text for a named service and publishes it, waiting for the broker's
// confirmation. With --outbox the messages are on disk before anything is sent, and whatever is
// not confirmed (broker down, receiver not set up yet) is resent by the next `cmq send --outbox`.

#include <cstdio>

#include <QCommandLineParser>
#include <QFile>

#include "clientsettings.h"
#include "command.h"

namespace cmq::cli {
namespace {

const QByteArray Usage =
    QByteArray(
        "Usage: cmq send --to NAME [options] [TEXT | -]\n\n"
        "Encrypts TEXT (or standard input, '-') for NAME's public key and publishes it on the\n"
        "usual conventions (exchange CipherMQ_exchange, routing key NAME_key). Prints the message\n"
        "id of each message once the broker has stored it.\n"
        "Without TEXT and with --outbox, only resends what the outbox holds.\n\n"
        "Options:\n"
        "  --to NAME      the receiving service (its certificate CN)\n"
        "  --lines        each line of standard input is one message\n"
        "  --id ID        the message id (default {me}-{uuid}-{to}); sending the same id again\n"
        "                 delivers it once\n"
        "  --timeout S    wait at most S seconds for the confirmations (default 30)\n\n") +
    ConnectionFlags::help();

QByteArray readStdin()
{
    QFile in;
    if (!in.open(stdin, QIODevice::ReadOnly))
        return {};
    return in.readAll();
}

int runSend(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption to(QStringLiteral("to"), QString(), QStringLiteral("name"));
    const QCommandLineOption lines(QStringLiteral("lines"), QString());
    const QCommandLineOption id(QStringLiteral("id"), QString(), QStringLiteral("id"));
    const QCommandLineOption timeout(QStringLiteral("timeout"), QString(), QStringLiteral("s"));
    parser.addOptions({to, lines, id, timeout});
    const ConnectionFlags connection;
    connection.addTo(parser);
    if (const int code = parseCommandLine(parser, args, "send", Usage); code >= 0)
        return code;

    const QStringList words = parser.positionalArguments();
    if (words.size() > 1)
        return fail("send", QStringLiteral("give the text as one argument (quote it)"), ExitUsage);
    int timeoutMs = 30000;
    if (parser.isSet(timeout) && !parseSeconds(parser.value(timeout), &timeoutMs))
        return fail("send", QStringLiteral("--timeout must be a positive number of seconds"),
                    ExitUsage);
    if (parser.isSet(lines) && !words.isEmpty() && words.first() != u"-")
        return fail("send", QStringLiteral("--lines reads standard input; give no TEXT"),
                    ExitUsage);
    if (parser.isSet(lines) && parser.isSet(id))
        return fail("send", QStringLiteral("--id names one message; it cannot go with --lines"),
                    ExitUsage);
    const bool haveMessages = parser.isSet(lines) || !words.isEmpty();
    if (haveMessages && !parser.isSet(to))
        return fail("send", QStringLiteral("--to NAME is required"), ExitUsage);

    auto settings = connection.resolve(parser, false);
    if (!settings)
        return fail("send", settings.error(), ExitUsage);
    if (!haveMessages && settings->outboxDir.isEmpty())
        return fail("send", QStringLiteral("nothing to send: give TEXT, '-' or --lines"),
                    ExitUsage);

    QList<QByteArray> payloads;
    if (parser.isSet(lines)) {
        for (QByteArray line : readStdin().split('\n')) {
            if (line.endsWith('\r'))
                line.chop(1);
            if (!line.isEmpty())
                payloads.append(line);
        }
    } else if (!words.isEmpty()) {
        payloads.append(words.first() == u"-" ? readStdin() : words.first().toUtf8());
    }

    auto made = makeClient(settings.value());
    if (!made)
        return fail("send", made.error(), ExitFailure);
    client::BlockingClient &blocking = *made.value();
    client::Client &client = blocking.client();

    int failures = 0;
    QObject::connect(
        &client, &client::Client::messageStateChanged, &client,
        [&](const QString &messageId, client::MessageState state, const QString &detail) {
            if (state == client::MessageState::Delivered)
                writeOut(messageId.toUtf8() + '\n');
            else if (state == client::MessageState::Failed) {
                ++failures;
                fail("send", QStringLiteral("%1 refused: %2").arg(messageId, detail), ExitFailure);
            }
        });
    // Into the outbox before connecting: with --outbox the messages are safe on disk even when
    // no broker can be reached now.
    if (const Status started = client.start(); !started)
        return fail("send", started.error(), ExitFailure);
    for (const QByteArray &payload : std::as_const(payloads)) {
        client::SendOptions options;
        if (parser.isSet(id))
            options.messageId = parser.value(id);
        if (const auto sent = client.send(parser.value(to), payload, options); !sent)
            return fail("send", sent.error(), ExitFailure);
    }
    const QString kept =
        settings->outboxDir.isEmpty()
            ? QString()
            : QStringLiteral("; kept in %1 for the next run").arg(settings->outboxDir);
    if (const Status connected = blocking.connect(settings->connectTimeoutMs); !connected)
        return fail("send", connected.error() + kept, ExitUnreachable);
    if (const Status done = blocking.waitForOutbox(timeoutMs); !done)
        return fail("send", done.error() + kept, ExitFailure);
    return failures == 0 ? ExitOk : ExitFailure;
}

const CommandRegistration
    registration({QStringLiteral("send"),
                  QStringLiteral("send an encrypted message to a service by name"), &runSend});

} // namespace
} // namespace cmq::cli
