// ciphermq-broker: parses the command line, loads the configuration and runs the Broker.

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <malloc.h>
#include <unistd.h>

#include <QCommandLineParser>
#include <QCoreApplication>

#include "app/logsetup.h"
#include "app/sdnotify.h"
#include "app/signalwatcher.h"
#include "broker.h"
#include "config/config.h"
#include "net/openfilelimit.h"

namespace {

// app.exec()'s result when the node stepped down: the process starts over as a standby.
constexpr int RestartAsStandby = 75;

// glibc's defaults hand every buffer over 128 KiB (a connection's burst of deliveries, a
// publish batch's arrays) to mmap and give freed memory back at once, so each burst paid
// fresh zeroed pages again: page faults were a tenth of the broker's CPU at W=256
// (bench/README.md, "Allocator settings"). Fixed values keep such buffers in the heap for
// reuse; at most 32 MiB of free heap per arena is kept back from the system.
void keepBuffersForReuse()
{
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 32 << 20);
}

// With TZ unset, glibc's tzset() (which Qt calls before every local-time conversion, e.g. for
// each timestamp column QPSQL reads) stats /etc/localtime again each time: two newfstatat calls
// per message in a backlog drain, about a quarter of the storage thread's samples there
// (bench/README.md, "The time zone, read once"). Naming the same file keeps the zone glibc read
// first; a changed system zone is then seen at the next start. An explicit TZ, even empty, is kept.
void readTimeZoneOnce()
{
    if (!qEnvironmentVariableIsSet("TZ"))
        qputenv("TZ", ":/etc/localtime");
}

// Qt's GLib event dispatcher writes its wake-up eventfd on every event posted, even to its own
// thread while it is awake: most messages post several (a flush per connection, a publish
// dispatch, a hand-over to the storage thread), and at 64 publishers × W=1 those writes were as
// many system calls as the socket writes themselves (bench/README.md, "Fewer system calls per
// message"). Qt's own dispatcher writes it once until the loop has woken up. The broker uses
// nothing from GLib; an explicit QT_NO_GLIB, even empty, is kept.
void useQtEventDispatcher()
{
    if (!qEnvironmentVariableIsSet("QT_NO_GLIB"))
        qputenv("QT_NO_GLIB", "1");
}

} // namespace

int main(int argc, char *argv[])
{
    keepBuffersForReuse();
    readTimeZoneOnce();
    useQtEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("ciphermq-broker"));
    QCoreApplication::setApplicationVersion(QStringLiteral(CIPHERMQ_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("CipherMQ broker: relays end-to-end-encrypted messages over mutual TLS."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption configOption(
        {QStringLiteral("c"), QStringLiteral("config")},
        QStringLiteral("Configuration file (default: /etc/ciphermq/config.toml)."),
        QStringLiteral("path"), QStringLiteral("/etc/ciphermq/config.toml"));
    const QCommandLineOption checkOption(
        QStringLiteral("check-config"),
        QStringLiteral("Validate the configuration file and exit (0 when valid)."));
    parser.addOption(configOption);
    parser.addOption(checkOption);
    parser.process(app);

    // --check-config may be given the file directly: ciphermq-broker --check-config FILE
    QString configPath = parser.value(configOption);
    if (parser.isSet(checkOption) && !parser.isSet(configOption)
        && parser.positionalArguments().size() == 1)
        configPath = parser.positionalArguments().constFirst();

    const cmq::Result<cmq::LoadedConfig> loaded = cmq::loadConfig(configPath);
    if (!loaded) {
        std::fprintf(stderr, "ciphermq-broker: invalid configuration: %s\n",
                     qPrintable(loaded.error()));
        return 2;
    }
    for (const QString &warning : loaded->warnings)
        std::fprintf(stderr, "ciphermq-broker: warning: %s\n", qPrintable(warning));
    if (parser.isSet(checkOption)) {
        std::printf("%s: configuration OK\n", qPrintable(loaded->config.sourcePath));
        return 0;
    }

    cmq::setUpLogging(loaded->config.logging);
    if (const cmq::Status logFiles = cmq::setUpLogFiles(loaded->config.logging); !logFiles) {
        std::fprintf(stderr, "ciphermq-broker: cannot open the log files: %s\n",
                     qPrintable(logFiles.error()));
        return 1;
    }
    // Before anything opens descriptors: every client connection needs one.
    cmq::raiseOpenFileLimitFor(loaded->config.server.maxConnections);
    int exitCode = 0;
    {
        cmq::Broker broker(loaded->config);
        if (const cmq::Status started = broker.start(); !started) {
            std::fprintf(stderr, "ciphermq-broker: cannot start: %s\n",
                         qPrintable(started.error()));
            return 1;
        }

        cmq::SignalWatcher signalWatcher;
        QObject::connect(
            &signalWatcher, &cmq::SignalWatcher::terminateRequested, &broker, [&broker] {
                (void)cmq::sdNotifyStopping(); // best effort: systemd sees the exit anyway
                broker.shutdown([] { QCoreApplication::exit(0); });
            });
        // A deposed active keeps nothing of its time as active: it tells its clients, lets
        // the storage write what it still can (the epoch refuses it) and starts over.
        QObject::connect(&broker, &cmq::Broker::restartRequested, &broker,
                         [&broker](const QString &reason) {
                             std::fprintf(stderr,
                                          "ciphermq-broker: no longer the active node (%s); "
                                          "restarting as a standby\n",
                                          qPrintable(reason));
                             broker.shutdown([] { QCoreApplication::exit(RestartAsStandby); });
                         });
        QObject::connect(&signalWatcher, &cmq::SignalWatcher::reloadRequested, &broker, [&broker] {
            // The outcome is logged by reload() itself.
            (void)broker.reload();
        });

        const auto &address = loaded->config.server.address;
        std::printf("ciphermq-broker %s ready on %s:%u (storage: %s%s)\n", CIPHERMQ_VERSION,
                    qPrintable(address.host.toString()), unsigned(broker.serverPort()),
                    qPrintable(loaded->config.database.driver),
                    broker.isServing() ? "" : ", standby");
        std::fflush(stdout);
        // Type=notify: systemd counts the service as started (and starts what is ordered after it)
        // only now, once storage is recovered and the listener is up.
        if (const cmq::Status notified = cmq::sdNotifyReady(QStringLiteral("Ready on %1:%2")
                                                                .arg(address.host.toString())
                                                                .arg(broker.serverPort()));
            !notified)
            std::fprintf(stderr, "ciphermq-broker: warning: %s\n", qPrintable(notified.error()));
        exitCode = app.exec();
    } // the broker is gone here: its last commits written, the leadership lock released
    if (exitCode != RestartAsStandby)
        return exitCode;
    std::fflush(nullptr);
    ::execv("/proc/self/exe", argv);
    std::fprintf(stderr, "ciphermq-broker: cannot restart: %s\n", std::strerror(errno));
    return 1;
}
