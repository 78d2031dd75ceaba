// cmq presence: prints who of our presence groups comes online and goes offline, as the broker
// tells it (docs/PROTOCOL.md, "Presence"), until stopped, --count lines or --timeout.

#include <QCommandLineParser>
#include <QEventLoop>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>

#include "clientsettings.h"
#include "command.h"

namespace cmq::cli {
namespace {

const QByteArray Usage =
    QByteArray("Usage: cmq presence [options]\n\n"
               "Subscribes to presence and prints one line per change: \"<cn> online\" or\n"
               "\"<cn> offline\", or with --json {\"cn\":...,\"online\":true|false}. First come\n"
               "the identities online now; after a reconnect they are printed again. Who may\n"
               "see whom is the broker's acl.presence_groups.\n\n"
               "Options:\n"
               "  --json        one JSON object per line\n"
               "  --count N     exit after N lines\n"
               "  --timeout S   exit after S seconds (status 1 if --count lines did not all "
               "come)\n\n") +
    ConnectionFlags::help();

int runPresence(const QStringList &args)
{
    QCommandLineParser parser;
    const QCommandLineOption json(QStringLiteral("json"), QString());
    const QCommandLineOption count(QStringLiteral("count"), QString(), QStringLiteral("n"));
    const QCommandLineOption timeout(QStringLiteral("timeout"), QString(), QStringLiteral("s"));
    parser.addOptions({json, count, timeout});
    const ConnectionFlags connection;
    connection.addTo(parser);
    if (const int code = parseCommandLine(parser, args, "presence", Usage); code >= 0)
        return code;
    if (!parser.positionalArguments().isEmpty())
        return fail(
            "presence",
            QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()),
            ExitUsage);
    int maxLines = 0;
    if (parser.isSet(count)) {
        bool ok = false;
        maxLines = parser.value(count).toInt(&ok);
        if (!ok || maxLines <= 0)
            return fail("presence", QStringLiteral("--count must be a positive number"), ExitUsage);
    }
    int timeoutMs = -1;
    if (parser.isSet(timeout) && !parseSeconds(parser.value(timeout), &timeoutMs))
        return fail("presence", QStringLiteral("--timeout must be a positive number of seconds"),
                    ExitUsage);
    auto settings = connection.resolve(parser, false);
    if (!settings)
        return fail("presence", settings.error(), ExitUsage);
    auto made = makeClient(settings.value());
    if (!made)
        return fail("presence", made.error(), ExitFailure);
    client::BlockingClient &blocking = *made.value();
    if (const Status connected = blocking.connect(settings->connectTimeoutMs); !connected)
        return fail("presence", connected.error(), ExitUnreachable);

    client::Client &client = blocking.client();
    QEventLoop loop;
    int printed = 0;
    QString refused;
    const bool asJson = parser.isSet(json);
    QObject::connect(&client, &client::Client::presenceChanged, &loop,
                     [&](const QString &cn, bool online) {
                         // Lines read together come in one go, after quit() too.
                         if (maxLines > 0 && printed >= maxLines)
                             return;
                         if (asJson)
                             writeOut(QJsonDocument(QJsonObject{{QStringLiteral("cn"), cn},
                                                                {QStringLiteral("online"), online}})
                                          .toJson(QJsonDocument::Compact) +
                                      '\n');
                         else
                             writeOut(cn.toUtf8() + (online ? " online\n" : " offline\n"));
                         if (maxLines > 0 && ++printed >= maxLines)
                             loop.quit();
                     });
    QObject::connect(&client, &client::Client::errorOccurred, &loop, [&](const QString &error) {
        if (!error.startsWith(u"presence on"))
            return;
        refused = error;
        loop.quit();
    });
    if (timeoutMs >= 0)
        QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
    client.watchPresence(true);
    loop.exec();
    if (!refused.isEmpty())
        return fail("presence", refused, ExitFailure);
    if (maxLines > 0 && printed < maxLines)
        return fail(
            "presence",
            QStringLiteral("%1 of %2 presence lines came in time").arg(printed).arg(maxLines),
            ExitFailure);
    return ExitOk;
}

const CommandRegistration
    registration({QStringLiteral("presence"),
                  QStringLiteral("print who of our presence groups comes online and goes offline"),
                  &runPresence});

} // namespace
} // namespace cmq::cli
