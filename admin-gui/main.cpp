// ciphermq-admin: the desktop admin console, or with --export a headless snapshot exporter
// for scripts and cron. Only parses arguments and wires objects; see docs/ADMIN-GUI.md.

#include <algorithm>
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>

#include "admin/adminclient.h"
#include "models/connectionoptions.h"
#include "models/connectionprofiles.h"
#include "models/snapshotexport.h"
#include "ui/mainwindow.h"
#include "ui/queuedetaildialog.h"

using namespace cmq::admingui;

namespace {

int exportHeadless(const ConnectionOptions &options, const QString &path, const QString &format,
                   const QString &queue)
{
    const auto parsed = parseExportFormat(format.isEmpty() ? QStringLiteral("json") : format);
    const auto tls = options.sslConfiguration();
    if (!parsed || !tls) {
        std::fprintf(stderr, "ciphermq-admin: %s\n",
                     qPrintable(!parsed ? parsed.error() : tls.error()));
        return 2;
    }
    cmq::admin::AdminClient client;
    client.setSslConfiguration(tls.value());
    client.connectToBroker(options.host, options.port);
    if (const auto connected = client.waitForConnected(15000); !connected) {
        std::fprintf(stderr, "ciphermq-admin: %s\n",
                     qPrintable(AdminSession::describeError(connected.error(), options)));
        return 1;
    }
    if (const auto status = exportSnapshot(client, path, parsed.value(), 15000, queue); !status) {
        std::fprintf(stderr, "ciphermq-admin: %s\n",
                     qPrintable(AdminSession::describeError(status.error(), options)));
        return 1;
    }
    return 0;
}

} // namespace

int main(int argc, char *argv[])
{
    // Headless export must run without a display (cron, ssh).
    bool headless = false;
    for (int i = 1; i < argc; ++i)
        headless = headless || qstrcmp(argv[i], "--export") == 0;
    if (headless)
        qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("CipherMQ"));
    QApplication::setApplicationName(QStringLiteral("ciphermq-admin"));
    QApplication::setApplicationVersion(QStringLiteral(CIPHERMQ_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("CipherMQ desktop admin console"));
    parser.addHelpOption();
    parser.addVersionOption();
    ConnectionOptions::addTo(parser);
    parser.addOptions({
        {"export", "Write a metrics snapshot to <file> and exit (no window).", "file"},
        {"format", "Export format: prom, json or csv (default json).", "format"},
        {"tab", "Start on this tab: overview, queues, exchanges, connections, ratelimits, audit or "
                "talkers.",
         "tab"},
        {"queue",
         "Open the detail window of this queue (with --export: add the first 1000 of "
         "its messages' metadata to the JSON).",
         "queue"},
        {"queue-tab", "The tab of --queue's window to show: bindings, messages or deadletters.", "tab"},
        {"select",
         "Select these rows (queue names or connection ids, comma-separated) of the "
         "start tab's table once they are listed.",
         "keys"},
        {"interval", "Watch interval in milliseconds (default 1000).", "ms"},
        {"profile", "Open the saved profile <name>: one window per broker it lists.", "name"},
    });
    parser.process(app);
    const ConnectionOptions options = ConnectionOptions::fromParser(parser);

    if (parser.isSet("export"))
        return exportHeadless(options, parser.value("export"), parser.value("format"),
                              parser.value("queue"));

    MainWindow window;
    if (parser.isSet("interval"))
        window.session().setWatchIntervalMs(
            std::clamp(parser.value("interval").toInt(), 100, 60000));
    if (parser.isSet("tab") && !window.selectTab(parser.value("tab"))) {
        std::fprintf(stderr, "ciphermq-admin: unknown tab '%s'\n", qPrintable(parser.value("tab")));
        return 2;
    }
    window.show();
    if (parser.isSet("select"))
        window.selectWhenListed(parser.value("select").split(u',', Qt::SkipEmptyParts));
    if (parser.isSet("queue")) {
        QueueDetailDialog *detail = window.openQueueDetail(parser.value("queue"));
        if (parser.value("queue-tab") == QLatin1String("messages"))
            detail->showMessagesTab();
        else if (parser.value("queue-tab") == QLatin1String("deadletters"))
            detail->showDeadLettersTab();
    }
    if (parser.isSet("profile")) {
        QSettings settings;
        const QString name = parser.value("profile");
        const QList<ConnectionProfile> profiles = loadProfiles(settings);
        const auto it = std::find_if(profiles.cbegin(), profiles.cend(),
                                     [&](const ConnectionProfile &p) { return p.name == name; });
        if (it == profiles.cend() || it->nodes.isEmpty()) {
            std::fprintf(stderr, "ciphermq-admin: no saved profile '%s' with a broker\n",
                         qPrintable(name));
            return 2;
        }
        window.openProfile(*it);
    } else if (options.isComplete())
        window.connectTo(options);
    else
        window.showConnectDialog();
    return app.exec();
}
