#pragma once
// How `cmq` finds its subcommands: each file under commands/ registers itself with a static
// CommandRegistration, so adding a subcommand is adding a file.

#include <QList>
#include <QString>
#include <QStringList>

namespace cmq::cli {

// Exit codes scripts can rely on (docs/CLIENT.md).
enum ExitCode {
    ExitOk = 0,
    ExitFailure = 1,     // the operation failed (refused, timed out, not delivered)
    ExitUsage = 2,       // bad arguments
    ExitUnreachable = 3, // no broker could be reached / TLS refused
};

struct Command
{
    QString name;    // "send", "certs", "admin" ...
    QString summary; // one line for `cmq --help`
    // args excludes the program name and the subcommand name.
    int (*run)(const QStringList &args);
};

QList<Command> &commands();

struct CommandRegistration
{
    explicit CommandRegistration(Command command) { commands().append(std::move(command)); }
};

} // namespace cmq::cli
