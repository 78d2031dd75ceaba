// cmq publish: publishes an envelope that is already sealed (raw EncryptedInputData JSON) on any
// exchange and routing key, through the outbox like every message, and waits for the ACK.

#include <QCommandLineParser>
#include <QFile>

#include "clientsettings.h"
#include "command.h"

namespace cmq::cli {
namespace {

const QByteArray Usage =
    QByteArray(
        "Usage: cmq publish --exchange E --routing-key K [options] FILE | -\n\n"
        "Publishes the envelope JSON in FILE (or standard input) as it is: one object with\n"
        "message_id, receiver_client_id, enc_session_key, nonce, ciphertext (and optionally\n"
        "sent_time and extra fields). Prints the message id once the broker has stored it.\n\n"
        "Options:\n"
        "  --exchange E       the exchange\n"
        "  --routing-key K    the routing key\n"
        "  --timeout S        wait at most S seconds for the confirmation (default 30)\n\n") +
    ConnectionFlags::help();

int runPublish(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption exchange(QStringLiteral("exchange"), QString(), QStringLiteral("e"));
    const QCommandLineOption routingKey(QStringLiteral("routing-key"), QString(),
                                        QStringLiteral("k"));
    const QCommandLineOption timeout(QStringLiteral("timeout"), QString(), QStringLiteral("s"));
    parser.addOptions({exchange, routingKey, timeout});
    const ConnectionFlags connection;
    connection.addTo(parser);
    if (const int code = parseCommandLine(parser, args, "publish", Usage); code >= 0)
        return code;
    const QStringList words = parser.positionalArguments();
    if (words.size() != 1)
        return fail("publish", QStringLiteral("give one FILE, or '-' for standard input"),
                    ExitUsage);
    if (!parser.isSet(exchange) || !parser.isSet(routingKey))
        return fail("publish", QStringLiteral("--exchange and --routing-key are required"),
                    ExitUsage);
    int timeoutMs = 30000;
    if (parser.isSet(timeout) && !parseSeconds(parser.value(timeout), &timeoutMs))
        return fail("publish", QStringLiteral("--timeout must be a positive number of seconds"),
                    ExitUsage);
    auto settings = connection.resolve(parser, false);
    if (!settings)
        return fail("publish", settings.error(), ExitUsage);

    QFile in;
    const bool opened = words.first() == u"-"
                            ? in.open(stdin, QIODevice::ReadOnly)
                            : (in.setFileName(words.first()), in.open(QIODevice::ReadOnly));
    if (!opened)
        return fail("publish",
                    QStringLiteral("cannot read %1: %2").arg(words.first(), in.errorString()),
                    ExitUsage);
    const QByteArray envelope = in.readAll();

    auto made = makeClient(settings.value());
    if (!made)
        return fail("publish", made.error(), ExitFailure);
    client::BlockingClient &blocking = *made.value();
    if (const Status connected = blocking.connect(settings->connectTimeoutMs); !connected)
        return fail("publish", connected.error(), ExitUnreachable);
    const auto published = blocking.publishEnvelope(parser.value(exchange),
                                                    parser.value(routingKey), envelope, timeoutMs);
    if (!published)
        return fail("publish", published.error(), ExitFailure);
    writeOut(published.value().toUtf8() + '\n');
    return ExitOk;
}

const CommandRegistration registration({QStringLiteral("publish"),
                                        QStringLiteral("publish a sealed envelope (raw JSON)"),
                                        &runPublish});

} // namespace
} // namespace cmq::cli
