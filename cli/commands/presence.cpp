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
    StreamCommand stream;
    if (const int code = openStreamCommand(args, "presence", Usage, false, stream); code >= 0)
        return code;
    const int maxLines = stream.maxLines;
    const int timeoutMs = stream.timeoutMs;
    client::BlockingClient &blocking = *stream.client;

    client::Client &client = blocking.client();
    QEventLoop loop;
    int printed = 0;
    QString refused;
    const bool asJson = stream.json;
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
