#pragma once
// Where and as whom the console connects: host, port and the three PEM files. Shared by the
// command line, the connect dialog and the recent-connections list (which stores file paths,
// never the key's contents).

#include <QCommandLineParser>
#include <QList>
#include <QSettings>
#include <QSslConfiguration>
#include <QString>

#include "util/result.h"

namespace cmq::admingui {

struct ConnectionOptions
{
    QString host = QStringLiteral("localhost");
    quint16 port = 9091;
    QString caPath;
    QString certPath;
    QString keyPath;

    bool isComplete() const;
    QString label() const; // "host:port as cert.crt"
    // Readable reasons the options cannot work yet (missing files), empty when fine.
    QString validate() const;
    Result<QSslConfiguration> sslConfiguration() const;
    bool operator==(const ConnectionOptions &) const = default;

    static void addTo(QCommandLineParser &parser);
    static ConnectionOptions fromParser(const QCommandLineParser &parser);
};

// One connection at the current QSettings group or array index (shared by the recent list and
// the saved profiles): host, port and the three file paths.
void writeConnection(QSettings &settings, const ConnectionOptions &options);
ConnectionOptions readConnection(QSettings &settings);

// Most recent first, at most `max` entries, duplicates collapsed.
void rememberConnection(QSettings &settings, const ConnectionOptions &options, int max = 8);
QList<ConnectionOptions> recentConnections(QSettings &settings);

} // namespace cmq::admingui
