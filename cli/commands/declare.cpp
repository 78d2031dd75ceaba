// cmq declare: declares a queue or an exchange, or binds a queue, and prints the broker's reply.

#include <QCommandLineParser>

#include "clientsettings.h"
#include "command.h"

namespace cmq::cli {
namespace {

const QByteArray Usage =
    QByteArray(
        "Usage: cmq declare queue NAME\n"
        "       cmq declare exchange NAME\n"
        "       cmq declare bind QUEUE EXCHANGE ROUTING_KEY\n\n"
        "Sends one topology command and prints the broker's reply (\"Queue declared\", ...).\n"
        "Receivers may only declare and bind queues named after their CN (CN_...).\n\n"
        "Options:\n"
        "  --timeout S   wait at most S seconds for the reply (default 15)\n\n") +
    ConnectionFlags::help();

int runDeclare(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption timeout(QStringLiteral("timeout"), QString(), QStringLiteral("s"));
    parser.addOption(timeout);
    const ConnectionFlags connection;
    connection.addTo(parser);
    if (const int code = parseCommandLine(parser, args, "declare", Usage); code >= 0)
        return code;
    const QStringList words = parser.positionalArguments();
    const QString what = words.value(0);
    const bool valid = ((what == u"queue" || what == u"exchange") && words.size() == 2) ||
                       (what == u"bind" && words.size() == 4);
    if (!valid)
        return fail("declare",
                    QStringLiteral("expected 'queue NAME', 'exchange NAME' or 'bind "
                                   "QUEUE EXCHANGE ROUTING_KEY'"),
                    ExitUsage);
    int timeoutMs = 15000;
    if (parser.isSet(timeout) && !parseSeconds(parser.value(timeout), &timeoutMs))
        return fail("declare", QStringLiteral("--timeout must be a positive number of seconds"),
                    ExitUsage);
    auto settings = connection.resolve(parser, false);
    if (!settings)
        return fail("declare", settings.error(), ExitUsage);
    auto made = makeClient(settings.value());
    if (!made)
        return fail("declare", made.error(), ExitFailure);
    client::BlockingClient &blocking = *made.value();
    if (const Status connected = blocking.connect(settings->connectTimeoutMs); !connected)
        return fail("declare", connected.error(), ExitUnreachable);
    Result<QByteArray> reply = Result<QByteArray>::failure({});
    if (what == u"queue")
        reply = blocking.declareQueue(words.at(1), timeoutMs);
    else if (what == u"exchange")
        reply = blocking.declareExchange(words.at(1), timeoutMs);
    else
        reply = blocking.bindQueue(words.at(1), words.at(2), words.at(3), timeoutMs);
    if (!reply)
        return fail("declare", reply.error(), ExitFailure);
    writeOut(reply.value() + '\n');
    return ExitOk;
}

const CommandRegistration
    registration({QStringLiteral("declare"),
                  QStringLiteral("declare a queue or exchange, or bind a queue"), &runDeclare});

} // namespace
} // namespace cmq::cli
