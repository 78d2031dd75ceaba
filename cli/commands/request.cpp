// cmq request: sends a request to a service and prints its reply (request/reply over two
// encrypted messages correlated by id; the reply comes to our own queue).

#include <QCommandLineParser>
#include <QFile>

#include "clientsettings.h"
#include "command.h"

namespace cmq::cli {
namespace {

const QByteArray Usage =
    QByteArray(
        "Usage: cmq request --to NAME [options] TEXT | -\n\n"
        "Sends TEXT (or standard input) to NAME as a request and prints the reply followed by a\n"
        "newline. Replies come to our own queue, so our certificate's CN must be both a sender "
        "and\n"
        "a receiver in the broker's ACL, and we need a key pair (cmq keygen).\n\n"
        "Options:\n"
        "  --to NAME     the service that answers\n"
        "  --timeout S   give up after S seconds without a reply (default 30; exit status 1)\n\n") +
    ConnectionFlags::help();

int runRequest(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption to(QStringLiteral("to"), QString(), QStringLiteral("name"));
    const QCommandLineOption timeout(QStringLiteral("timeout"), QString(), QStringLiteral("s"));
    parser.addOptions({to, timeout});
    const ConnectionFlags connection;
    connection.addTo(parser);
    if (const int code = parseCommandLine(parser, args, "request", Usage); code >= 0)
        return code;
    const QStringList words = parser.positionalArguments();
    if (words.size() != 1)
        return fail("request", QStringLiteral("give the request text as one argument, or '-'"),
                    ExitUsage);
    if (!parser.isSet(to))
        return fail("request", QStringLiteral("--to NAME is required"), ExitUsage);
    int timeoutMs = 30000;
    if (parser.isSet(timeout) && !parseSeconds(parser.value(timeout), &timeoutMs))
        return fail("request", QStringLiteral("--timeout must be a positive number of seconds"),
                    ExitUsage);
    auto settings = connection.resolve(parser, true);
    if (!settings)
        return fail("request", settings.error(), ExitUsage);
    QByteArray payload = words.first().toUtf8();
    if (words.first() == u"-") {
        QFile in;
        if (in.open(stdin, QIODevice::ReadOnly))
            payload = in.readAll();
    }
    auto made = makeClient(settings.value());
    if (!made)
        return fail("request", made.error(), ExitFailure);
    client::BlockingClient &blocking = *made.value();
    if (const Status connected = blocking.connect(settings->connectTimeoutMs); !connected)
        return fail("request", connected.error(), ExitUnreachable);
    const auto reply = blocking.request(parser.value(to), payload, timeoutMs);
    if (!reply)
        return fail("request", reply.error(), ExitFailure);
    writeOut(reply.value() + '\n');
    return ExitOk;
}

const CommandRegistration
    registration({QStringLiteral("request"),
                  QStringLiteral("send a request to a service and print its reply"), &runRequest});

} // namespace
} // namespace cmq::cli
