// cmq: the CipherMQ command-line client. Dispatches to the subcommands under commands/.

#include <algorithm>
#include <cstdio>

#include <QCoreApplication>

#include "command.h"

namespace cmq::cli {

QList<Command> &commands()
{
    static QList<Command> registry;
    return registry;
}

} // namespace cmq::cli

static void printUsage(FILE *out)
{
    std::fprintf(out, "Usage: cmq <command> [options]\n\nCommands:\n");
    auto sorted = cmq::cli::commands();
    std::sort(sorted.begin(), sorted.end(),
              [](const auto &a, const auto &b) { return a.name < b.name; });
    for (const cmq::cli::Command &command : sorted)
        std::fprintf(out, "  %-12s %s\n", qPrintable(command.name), qPrintable(command.summary));
    std::fprintf(out, "\nRun 'cmq <command> --help' for a command's options.\n");
}

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("cmq"));
    QCoreApplication::setApplicationVersion(QStringLiteral(CIPHERMQ_VERSION));
    QStringList args = app.arguments().mid(1);
    if (args.isEmpty() || args.first() == QLatin1String("--help")
        || args.first() == QLatin1String("-h") || args.first() == QLatin1String("help")) {
        printUsage(args.isEmpty() ? stderr : stdout);
        return args.isEmpty() ? cmq::cli::ExitUsage : cmq::cli::ExitOk;
    }
    if (args.first() == QLatin1String("--version")) {
        std::printf("cmq %s\n", CIPHERMQ_VERSION);
        return cmq::cli::ExitOk;
    }
    const QString name = args.takeFirst();
    for (const cmq::cli::Command &command : cmq::cli::commands()) {
        if (command.name == name)
            return command.run(args);
    }
    std::fprintf(stderr, "cmq: unknown command '%s' (see 'cmq --help')\n", qPrintable(name));
    return cmq::cli::ExitUsage;
}
