// cmq admin: every command of the admin protocol (docs/ADMIN-PROTOCOL.md) from the shell.
// Connects to the broker's admin listener with an admin client certificate, sends one
// command and prints its reply: JSON pretty-printed (or as received with --raw), the metrics
// text as is (so `cmq admin metrics | promtool check metrics` works), and for `watch` one
// snapshot per line until interrupted or --count snapshots.

#include <cstdio>

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QJsonDocument>
#include <QTimer>

#include "admin/adminclient.h"
#include "admindefinitions.h"
#include "command.h"
#include "tls/tlsidentity.h"

namespace cmq::cli {
namespace {

constexpr auto kDefaultAddress = "127.0.0.1:9091";

void printAdminUsage(FILE *out)
{
    std::fprintf(
        out,
        "Usage: cmq admin [options] <command> [arguments]\n\n"
        "Commands (docs/ADMIN-PROTOCOL.md):\n"
        "  metrics                      Prometheus text exposition\n"
        "  json [page options]          the whole snapshot\n"
        "  queues | exchanges | bindings | connections | ratelimits\n"
        "  talkers [page options]       per client CN: publishes, deliveries, bytes; paged,\n"
        "                               with rates (talkers.sort=publish_rate ...)\n"
        "  purge <queue>                drop the queue's ready messages\n"
        "  delete_queue <queue>         delete the queue and its messages\n"
        "  requeue <queue> [n]          send n (default all) dead letters back to their queues\n"
        "  disconnect <connection-id>   close a connection (ids from `connections`)\n"
        "  reload                       re-read the ACL and rate limits (like SIGHUP)\n"
        "  watch <interval_ms> [sections] [page options]\n"
        "                               one snapshot per line until Ctrl-C\n"
        "  page options (json, watch): queues.<o>=<v> connections.<o>=<v> ratelimits.<o>=<v>\n"
        "                               talkers.<o>=<v>, o = filter, sort, order (asc|desc),\n"
        "                               offset, limit; e.g. `json queues.sort=ready\n"
        "                               queues.order=desc queues.limit=20`, `talkers\n"
        "                               talkers.sort=publish_rate talkers.order=desc\n"
        "                               talkers.limit=20`\n"
        "  audit [n]                    the newest n admin actions (default 100)\n"
        "  queue_messages <queue> [after_id] [limit] [filter]\n"
        "                               one page of the queue's message metadata\n"
        "  definitions export           exchanges, queues, bindings as JSON (> defs.json)\n"
        "  definitions import <file|->  apply such a file (in requests that fit a line)\n"
        "  help                         the commands the broker knows\n\n"
        "Options:\n"
        "  --address HOST:PORT  admin listener (default %s, or $CMQ_ADMIN_ADDRESS)\n"
        "  --cert FILE          client certificate, PEM ($CMQ_CERT)\n"
        "  --key FILE           its private key, PEM ($CMQ_KEY)\n"
        "  --ca FILE            CA the broker's certificate must be signed by ($CMQ_CA)\n"
        "  --raw                print JSON exactly as received, one line\n"
        "  --count N            watch: stop after N snapshots\n"
        "  --timeout MS         give up after this long without a reply (default 15000)\n\n"
        "Exit status: 0 ok, 1 the broker answered with an error, 2 bad arguments,\n"
        "3 the broker could not be reached or refused the connection.\n",
        kDefaultAddress);
}

QString valueOrEnv(const QCommandLineParser &parser, const QCommandLineOption &option,
                   const char *env, const QString &fallback = {})
{
    if (parser.isSet(option))
        return parser.value(option);
    const QString fromEnv = qEnvironmentVariable(env);
    return fromEnv.isEmpty() ? fallback : fromEnv;
}

void printJson(const QByteArray &body, bool raw)
{
    if (raw) {
        std::fwrite(body.constData(), 1, size_t(body.size()), stdout);
        std::fputc('\n', stdout);
        return;
    }
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    const QByteArray pretty = doc.isNull() ? body + '\n' : doc.toJson(QJsonDocument::Indented);
    std::fwrite(pretty.constData(), 1, size_t(pretty.size()), stdout);
}

int runAdmin(const QStringList &args)
{
    QCommandLineParser parser;
    parser.setOptionsAfterPositionalArgumentsMode(QCommandLineParser::ParseAsOptions);
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")}, QString());
    const QCommandLineOption address(QStringLiteral("address"), QString(), QStringLiteral("a"));
    const QCommandLineOption cert(QStringLiteral("cert"), QString(), QStringLiteral("f"));
    const QCommandLineOption key(QStringLiteral("key"), QString(), QStringLiteral("f"));
    const QCommandLineOption ca(QStringLiteral("ca"), QString(), QStringLiteral("f"));
    const QCommandLineOption raw(QStringLiteral("raw"), QString());
    const QCommandLineOption count(QStringLiteral("count"), QString(), QStringLiteral("n"));
    const QCommandLineOption timeout(QStringLiteral("timeout"), QString(), QStringLiteral("ms"),
                                     QStringLiteral("15000"));
    parser.addOptions({help, address, cert, key, ca, raw, count, timeout});
    if (!parser.parse(QStringList{QStringLiteral("cmq-admin")} + args)) {
        std::fprintf(stderr, "cmq admin: %s\n", qPrintable(parser.errorText()));
        return ExitUsage;
    }
    if (parser.isSet(help)) {
        printAdminUsage(stdout);
        return ExitOk;
    }
    const QStringList words = parser.positionalArguments();
    if (words.isEmpty()) {
        printAdminUsage(stderr);
        return ExitUsage;
    }
    // `definitions export|import <file>`: the protocol's `definitions` / `definitions_import`.
    QString importPath;
    QString line = words.join(u' ');
    if (words.first() == QLatin1String("definitions")) {
        if (words.size() == 2 && words[1] == QLatin1String("export")) {
            line = words.first();
        } else if (words.size() == 3 && words[1] == QLatin1String("import")) {
            importPath = words[2];
            line = QStringLiteral("help"); // checked below; the import sends its own lines
        } else {
            std::fprintf(stderr, "cmq admin: expected 'definitions export' or 'definitions "
                                 "import <file>'\n");
            return ExitUsage;
        }
    }
    if (const QString invalid = admin::AdminClient::validate(line); !invalid.isEmpty()) {
        std::fprintf(stderr, "cmq admin: %s\n", qPrintable(invalid));
        return ExitUsage;
    }
    bool ok = false;
    const int timeoutMs = parser.value(timeout).toInt(&ok);
    if (!ok || timeoutMs <= 0) {
        std::fprintf(stderr, "cmq admin: --timeout must be a positive number of milliseconds\n");
        return ExitUsage;
    }
    int maxSnapshots = 0;
    if (parser.isSet(count)) {
        maxSnapshots = parser.value(count).toInt(&ok);
        if (!ok || maxSnapshots <= 0) {
            std::fprintf(stderr, "cmq admin: --count must be a positive number\n");
            return ExitUsage;
        }
    }

    const QString target =
        valueOrEnv(parser, address, "CMQ_ADMIN_ADDRESS", QString::fromLatin1(kDefaultAddress));
    const qsizetype colon = target.lastIndexOf(u':');
    const quint16 port = colon > 0 ? target.mid(colon + 1).toUShort() : 0;
    QString host = colon > 0 ? target.left(colon) : QString();
    if (host.startsWith(u'[') && host.endsWith(u']'))
        host = host.mid(1, host.size() - 2);
    if (port == 0 || host.isEmpty()) {
        std::fprintf(stderr, "cmq admin: --address must be HOST:PORT (got \"%s\")\n",
                     qPrintable(target));
        return ExitUsage;
    }
    const tls::TlsFiles files{valueOrEnv(parser, cert, "CMQ_CERT"),
                              valueOrEnv(parser, key, "CMQ_KEY"), valueOrEnv(parser, ca, "CMQ_CA")};
    if (files.certPath.isEmpty() || files.keyPath.isEmpty() || files.caPath.isEmpty()) {
        std::fprintf(stderr, "cmq admin: --cert, --key and --ca (or $CMQ_CERT, $CMQ_KEY, "
                             "$CMQ_CA) are required\n");
        return ExitUsage;
    }
    const Result<QSslConfiguration> tlsConfig = tls::clientConfiguration(files);
    if (!tlsConfig) {
        std::fprintf(stderr, "cmq admin: %s\n", qPrintable(tlsConfig.error()));
        return ExitUsage;
    }

    admin::AdminClient client;
    client.setSslConfiguration(tlsConfig.value());
    client.connectToBroker(host, port);
    if (const Status connected = client.waitForConnected(timeoutMs); !connected) {
        std::fprintf(stderr, "cmq admin: cannot connect to %s: %s\n", qPrintable(target),
                     qPrintable(connected.error()));
        return ExitUnreachable;
    }
    if (!importPath.isEmpty())
        return importDefinitions(client, importPath, timeoutMs);
    const bool watching = words.first() == QLatin1String("watch");
    int snapshots = 0;
    if (watching) {
        QObject::connect(&client, &admin::AdminClient::snapshotReceived, &client,
                         [&](const QJsonObject &snapshot) {
                             const QByteArray json =
                                 QJsonDocument(snapshot).toJson(QJsonDocument::Compact);
                             std::fwrite(json.constData(), 1, size_t(json.size()), stdout);
                             std::fputc('\n', stdout);
                             std::fflush(stdout);
                             if (maxSnapshots > 0 && ++snapshots >= maxSnapshots)
                                 QCoreApplication::exit(ExitOk);
                         });
    }
    const Result<admin::AdminReply> reply = client.request(line, timeoutMs);
    if (!reply) {
        // A refusal at connect arrives here: the broker closed after its error line.
        std::fprintf(stderr, "cmq admin: %s\n", qPrintable(reply.error()));
        return reply.error().startsWith(QLatin1String("Unauthorized")) || !client.isConnected()
                   ? ExitUnreachable
                   : ExitFailure;
    }
    if (!reply->ok) {
        std::fprintf(stderr, "Error: %s\n", qPrintable(reply->error));
        // The refusal of an identity at connect may arrive as the answer to our request.
        const bool refused = reply->error.startsWith(QLatin1String("Unauthorized:")) ||
                             reply->error.startsWith(QLatin1String("Server busy:")) ||
                             reply->error == QLatin1String("Server shutting down");
        return refused ? ExitUnreachable : ExitFailure;
    }
    if (reply->command == admin::AdminCommand::Metrics) {
        std::fwrite(reply->body.constData(), 1, size_t(reply->body.size()), stdout);
        return ExitOk;
    }
    if (!watching) {
        printJson(reply->body, parser.isSet(raw));
        return ExitOk;
    }
    std::fflush(stdout);
    QObject::connect(&client, &admin::AdminClient::disconnected, &client, [] {
        std::fprintf(stderr, "cmq admin: the broker closed the connection\n");
        QCoreApplication::exit(ExitUnreachable);
    });
    QObject::connect(
        &client, &admin::AdminClient::noticeReceived, &client,
        [](const QString &text) { std::fprintf(stderr, "cmq admin: %s\n", qPrintable(text)); });
    if (maxSnapshots > 0 && snapshots >= maxSnapshots)
        return ExitOk;
    return QCoreApplication::exec();
}

const CommandRegistration registration(Command{
    QStringLiteral("admin"),
    QStringLiteral("Query and manage a running broker over its admin listener"), &runAdmin});

} // namespace
} // namespace cmq::cli
