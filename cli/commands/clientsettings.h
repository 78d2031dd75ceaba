#pragma once
// What every messaging subcommand of cmq shares: the connection flags (--broker, --cert, --key,
// --ca, --identity, --outbox, --config), their environment fallbacks, the client config file,
// and one-line error reporting with the exit codes of command.h.

#include <memory>

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QString>

#include "client/blockingclient.h"
#include "client/clientoptions.h"
#include "util/result.h"

namespace cmq::cli {

struct ClientSettings
{
    client::ClientOptions options;
    QString identityDir; // holds x25519.key (+ .pub)
    QString outboxDir;   // empty: messages are kept in memory only
    int connectTimeoutMs = 10000;
};

class ConnectionFlags
{
public:
    ConnectionFlags();
    void addTo(QCommandLineParser &parser) const;
    // Flags first, then $CMQ_* variables, then the config file (--config, $CMQ_CONFIG or
    // ~/.config/cmq/client.toml). `needKeyPair`: the command receives, so the identity's key
    // pair must exist.
    Result<ClientSettings> resolve(const QCommandLineParser &parser, bool needKeyPair) const;
    // The shared part of every --help text.
    static const char *help();

private:
    QCommandLineOption m_config;
    QCommandLineOption m_broker;
    QCommandLineOption m_cert;
    QCommandLineOption m_key;
    QCommandLineOption m_ca;
    QCommandLineOption m_identity;
    QCommandLineOption m_outbox;
    QCommandLineOption m_connectTimeout;
    QCommandLineOption m_heartbeat;
    QCommandLineOption m_noPadding;
};

// The key pair file inside an identity directory.
QString keyPairPath(const QString &identityDir);
// $CMQ_IDENTITY, else ~/.local/share/cmq/identity.
QString defaultIdentityDir();

// Prints "cmq <command>: <message>" on one line of stderr and returns `exitCode`.
int fail(const char *command, const QString &message, int exitCode);

// Parses seconds ("30", "0.5") into milliseconds; false when not a positive number.
bool parseSeconds(const QString &text, int *milliseconds);

// Parses the command line (the subcommand's own options plus the connection flags when given)
// and handles --help. Returns -1 to continue, or the exit code to return.
int parseCommandLine(QCommandLineParser &parser, const QStringList &args, const char *command,
                     const QByteArray &usage);

// A client for the settings: on-disk outbox when configured. Fails when the outbox is locked.
Result<std::unique_ptr<client::BlockingClient>> makeClient(const ClientSettings &settings);

// What the streaming subcommands (`listen`, `presence`) share: --json, --count N, --timeout S,
// the connection flags, and a connected client.
struct StreamCommand
{
    bool json = false;
    int maxLines = 0;   // --count; 0: no limit
    int timeoutMs = -1; // --timeout; -1: none
    ClientSettings settings;
    std::unique_ptr<client::BlockingClient> client;
};

// Parses `args` (no positional arguments allowed) and connects. Returns -1 with `out` filled and
// connected, or the exit code to return.
int openStreamCommand(const QStringList &args, const char *command, const QByteArray &usage,
                      bool needKeyPair, StreamCommand &out);

// Writes bytes to stdout and flushes, so a reader sees each message as soon as it is handled.
void writeOut(const QByteArray &bytes);

} // namespace cmq::cli
