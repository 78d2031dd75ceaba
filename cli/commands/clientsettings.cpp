#include "clientsettings.h"

#include <cstdio>
#include <optional>

#include <QDir>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QStandardPaths>

#include <toml++/toml.h>

#include "client/fileoutbox.h"
#include "command.h"

namespace cmq::cli {

namespace {

struct FileSettings
{
    QString brokers, cert, key, ca, identity, outbox, name;
    int heartbeatSec = 0;
    std::optional<bool> padding;
};

QString defaultConfigPath()
{
    const QString fromEnv = qEnvironmentVariable("CMQ_CONFIG");
    if (!fromEnv.isEmpty())
        return fromEnv;
    const QString path = QDir::homePath() + QStringLiteral("/.config/cmq/client.toml");
    return QFileInfo::exists(path) ? path : QString();
}

// The [client] table of a cmq config file. Relative paths are relative to the file.
Result<FileSettings> readConfigFile(const QString &path)
{
    using R = Result<FileSettings>;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return R::failure(QStringLiteral("cannot read %1: %2").arg(path, file.errorString()));
    const QByteArray text = file.readAll();
    toml::table root;
    try {
        root = toml::parse(std::string_view(text.constData(), size_t(text.size())),
                           path.toStdString());
    } catch (const toml::parse_error &error) {
        return R::failure(QStringLiteral("%1:%2: %3")
                              .arg(path)
                              .arg(error.source().begin.line)
                              .arg(QString::fromUtf8(error.description().data(),
                                                     qsizetype(error.description().size()))));
    }
    const toml::table *table = root["client"].as_table();
    if (!table)
        return R::failure(QStringLiteral("%1: no [client] table").arg(path));
    const QDir base = QFileInfo(path).absoluteDir();
    FileSettings settings;
    QString problem;
    const auto text_ = [&](const char *key, bool isPath) -> QString {
        const toml::node *node = table->get(key);
        if (!node)
            return {};
        const auto value = node->value<std::string>();
        if (!value) {
            problem =
                QStringLiteral("%1: client.%2 must be a string").arg(path, QLatin1String(key));
            return {};
        }
        const QString result = QString::fromStdString(*value);
        return isPath && !result.isEmpty() ? QDir::cleanPath(base.absoluteFilePath(result))
                                           : result;
    };
    if (const toml::node *brokers = table->get("brokers")) {
        if (const toml::array *list = brokers->as_array()) {
            QStringList entries;
            for (const toml::node &entry : *list) {
                if (const auto value = entry.value<std::string>())
                    entries << QString::fromStdString(*value);
                else
                    problem = QStringLiteral("%1: client.brokers must hold strings").arg(path);
            }
            settings.brokers = entries.join(u',');
        } else {
            settings.brokers = text_("brokers", false);
        }
    }
    settings.cert = text_("cert", true);
    settings.key = text_("key", true);
    settings.ca = text_("ca", true);
    settings.identity = text_("identity", true);
    settings.outbox = text_("outbox", true);
    settings.name = text_("name", false);
    if (const toml::node *heartbeat = table->get("heartbeat_sec")) {
        const auto value = heartbeat->value<int64_t>();
        if (!value || *value < 1 || *value > 3600)
            problem = QStringLiteral("%1: client.heartbeat_sec must be 1 to 3600").arg(path);
        else
            settings.heartbeatSec = int(*value);
    }
    if (const toml::node *padding = table->get("padding")) {
        if (const auto value = padding->value<bool>())
            settings.padding = *value;
        else
            problem = QStringLiteral("%1: client.padding must be true or false").arg(path);
    }
    if (!problem.isEmpty())
        return R::failure(problem);
    return settings;
}

} // namespace

ConnectionFlags::ConnectionFlags()
    : m_config(QStringLiteral("config"), QString(), QStringLiteral("file")),
      m_broker(QStringLiteral("broker"), QString(), QStringLiteral("list")),
      m_cert(QStringLiteral("cert"), QString(), QStringLiteral("file")),
      m_key(QStringLiteral("key"), QString(), QStringLiteral("file")),
      m_ca(QStringLiteral("ca"), QString(), QStringLiteral("file")),
      m_identity(QStringLiteral("identity"), QString(), QStringLiteral("dir")),
      m_outbox(QStringLiteral("outbox"), QString(), QStringLiteral("dir")),
      m_connectTimeout(QStringLiteral("connect-timeout"), QString(), QStringLiteral("s")),
      m_heartbeat(QStringLiteral("heartbeat"), QString(), QStringLiteral("s")),
      m_noPadding(QStringLiteral("no-padding"), QString())
{
}

void ConnectionFlags::addTo(QCommandLineParser &parser) const
{
    parser.addOptions({m_config, m_broker, m_cert, m_key, m_ca, m_identity, m_outbox,
                       m_connectTimeout, m_heartbeat, m_noPadding});
}

const char *ConnectionFlags::help()
{
    return "Connection (flag, else environment variable, else the config file):\n"
           "  --broker HOST:PORT[,HOST:PORT...]  brokers, tried in order ($CMQ_BROKERS)\n"
           "  --cert FILE         client certificate, PEM; its CN is our name ($CMQ_CERT)\n"
           "  --key FILE          its private key, PEM, PKCS#1 or PKCS#8 ($CMQ_KEY)\n"
           "  --ca FILE           CA that signed the broker's certificate ($CMQ_CA)\n"
           "  --identity DIR      where our X25519 key pair is ($CMQ_IDENTITY,\n"
           "                      default ~/.local/share/cmq/identity)\n"
           "  --outbox DIR        keep unconfirmed messages on disk and resend them on the\n"
           "                      next run ($CMQ_OUTBOX; default: in memory only)\n"
           "  --config FILE       client config file, TOML with a [client] table: brokers,\n"
           "                      cert, key, ca, identity, outbox, name, heartbeat_sec,\n"
           "                      padding\n"
           "                      ($CMQ_CONFIG, default ~/.config/cmq/client.toml)\n"
           "  --connect-timeout S give up connecting after S seconds (default 10)\n"
           "  --heartbeat S       broker heartbeat interval (default 4)\n"
           "  --no-padding        send payloads unpadded (padding = false), for receivers\n"
           "                      that predate size padding (docs/CLIENT.md)\n\n"
           "Exit status: 0 success, 1 the operation failed (refused, timed out, not\n"
           "delivered), 2 bad arguments, 3 no broker reachable or the connection refused.\n";
}

Result<ClientSettings> ConnectionFlags::resolve(const QCommandLineParser &parser,
                                                bool needKeyPair) const
{
    using R = Result<ClientSettings>;
    FileSettings file;
    const QString configPath =
        parser.isSet(m_config) ? parser.value(m_config) : defaultConfigPath();
    if (!configPath.isEmpty()) {
        auto read = readConfigFile(configPath);
        if (!read)
            return R::failure(read.error());
        file = read.value();
    }
    const auto pick = [&](const QCommandLineOption &option, const char *env,
                          const QString &fromFile) {
        if (parser.isSet(option))
            return parser.value(option);
        const QString fromEnv = qEnvironmentVariable(env);
        return fromEnv.isEmpty() ? fromFile : fromEnv;
    };

    ClientSettings settings;
    const QString brokers = pick(m_broker, "CMQ_BROKERS", file.brokers);
    if (brokers.isEmpty())
        return R::failure(QStringLiteral("no broker given (--broker HOST:PORT or a config file)"));
    auto addresses = client::parseBrokerList(brokers);
    if (!addresses)
        return R::failure(QStringLiteral("--broker: %1").arg(addresses.error()));
    settings.options.brokers = addresses.value();
    settings.options.tls.certPath = pick(m_cert, "CMQ_CERT", file.cert);
    settings.options.tls.keyPath = pick(m_key, "CMQ_KEY", file.key);
    settings.options.tls.caPath = pick(m_ca, "CMQ_CA", file.ca);
    if (settings.options.tls.certPath.isEmpty() || settings.options.tls.keyPath.isEmpty() ||
        settings.options.tls.caPath.isEmpty())
        return R::failure(QStringLiteral("--cert, --key and --ca are required (or a config file)"));
    settings.options.name = file.name;
    settings.identityDir = pick(m_identity, "CMQ_IDENTITY", file.identity);
    if (settings.identityDir.isEmpty())
        settings.identityDir = defaultIdentityDir();
    settings.outboxDir = pick(m_outbox, "CMQ_OUTBOX", file.outbox);
    if (needKeyPair) {
        settings.options.keyPairPath = keyPairPath(settings.identityDir);
        if (!QFileInfo::exists(settings.options.keyPairPath))
            return R::failure(QStringLiteral("no key pair in %1: create one with 'cmq keygen "
                                             "--identity %1'")
                                  .arg(settings.identityDir));
    }
    if (parser.isSet(m_connectTimeout) &&
        !parseSeconds(parser.value(m_connectTimeout), &settings.connectTimeoutMs))
        return R::failure(QStringLiteral("--connect-timeout must be a positive number of seconds"));
    settings.options.connectTimeoutMs =
        qMin(settings.options.connectTimeoutMs, settings.connectTimeoutMs);
    if (file.heartbeatSec > 0)
        settings.options.heartbeatSec = file.heartbeatSec;
    if (parser.isSet(m_heartbeat)) {
        bool ok = false;
        const int seconds = parser.value(m_heartbeat).toInt(&ok);
        if (!ok || seconds < 1 || seconds > 3600)
            return R::failure(QStringLiteral("--heartbeat must be 1 to 3600 seconds"));
        settings.options.heartbeatSec = seconds;
    }
    if (file.padding)
        settings.options.padPayloads = *file.padding;
    if (parser.isSet(m_noPadding))
        settings.options.padPayloads = false;
    return settings;
}

QString keyPairPath(const QString &identityDir)
{
    return QDir(identityDir).filePath(QStringLiteral("x25519.key"));
}

QString defaultIdentityDir()
{
    const QString fromEnv = qEnvironmentVariable("CMQ_IDENTITY");
    if (!fromEnv.isEmpty())
        return fromEnv;
    return QDir::homePath() + QStringLiteral("/.local/share/cmq/identity");
}

int fail(const char *command, const QString &message, int exitCode)
{
    // One line, whatever the message holds, so scripts can log it as one record.
    QString line = message;
    line.replace(u'\n', u' ');
    std::fprintf(stderr, "cmq %s: %s\n", command, qPrintable(line));
    return exitCode;
}

bool parseSeconds(const QString &text, int *milliseconds)
{
    bool ok = false;
    const double seconds = text.toDouble(&ok);
    if (!ok || seconds <= 0 || seconds > 24 * 3600 * 365)
        return false;
    *milliseconds = qMax(1, int(seconds * 1000));
    return true;
}

int parseCommandLine(QCommandLineParser &parser, const QStringList &args, const char *command,
                     const QByteArray &usage)
{
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")}, QString());
    parser.addOption(help);
    parser.setOptionsAfterPositionalArgumentsMode(QCommandLineParser::ParseAsOptions);
    if (!parser.parse(QStringList{QStringLiteral("cmq-") + QLatin1String(command)} + args))
        return fail(command, parser.errorText(), ExitUsage);
    if (parser.isSet(help)) {
        std::fwrite(usage.constData(), 1, size_t(usage.size()), stdout);
        return ExitOk;
    }
    return -1;
}

Result<std::unique_ptr<client::BlockingClient>> makeClient(const ClientSettings &settings)
{
    using R = Result<std::unique_ptr<client::BlockingClient>>;
    // Errors reach the user as one line from the command; the library's own log lines only
    // when asked for.
    if (qEnvironmentVariableIsEmpty("CMQ_VERBOSE"))
        QLoggingCategory::setFilterRules(QStringLiteral("ciphermq.client*=false"));
    std::unique_ptr<client::OutboxStore> outbox;
    if (!settings.outboxDir.isEmpty()) {
        auto opened = client::FileOutbox::open(settings.outboxDir);
        if (!opened)
            return R::failure(opened.error());
        outbox = std::move(opened).value();
    }
    return std::make_unique<client::BlockingClient>(settings.options, std::move(outbox));
}

void writeOut(const QByteArray &bytes)
{
    std::fwrite(bytes.constData(), 1, size_t(bytes.size()), stdout);
    std::fflush(stdout);
}

int openStreamCommand(const QStringList &args, const char *command, const QByteArray &usage,
                      bool needKeyPair, StreamCommand &out)
{
    QCommandLineParser parser;
    const QCommandLineOption json(QStringLiteral("json"), QString());
    const QCommandLineOption count(QStringLiteral("count"), QString(), QStringLiteral("n"));
    const QCommandLineOption timeout(QStringLiteral("timeout"), QString(), QStringLiteral("s"));
    parser.addOptions({json, count, timeout});
    const ConnectionFlags connection;
    connection.addTo(parser);
    if (const int code = parseCommandLine(parser, args, command, usage); code >= 0)
        return code;
    if (!parser.positionalArguments().isEmpty())
        return fail(
            command,
            QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()),
            ExitUsage);
    if (parser.isSet(count)) {
        bool ok = false;
        out.maxLines = parser.value(count).toInt(&ok);
        if (!ok || out.maxLines <= 0)
            return fail(command, QStringLiteral("--count must be a positive number"), ExitUsage);
    }
    if (parser.isSet(timeout) && !parseSeconds(parser.value(timeout), &out.timeoutMs))
        return fail(command, QStringLiteral("--timeout must be a positive number of seconds"),
                    ExitUsage);
    out.json = parser.isSet(json);
    auto settings = connection.resolve(parser, needKeyPair);
    if (!settings)
        return fail(command, settings.error(), ExitUsage);
    out.settings = settings.value();
    auto made = makeClient(out.settings);
    if (!made)
        return fail(command, made.error(), ExitFailure);
    out.client = std::move(made.value());
    if (const Status connected = out.client->connect(out.settings.connectTimeoutMs); !connected)
        return fail(command, connected.error(), ExitUnreachable);
    return -1;
}

} // namespace cmq::cli
