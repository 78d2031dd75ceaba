#pragma once
// Saved connection profiles: a name and the brokers it lists (several independent nodes of a
// deployment), kept with QSettings — host, port and the PEM file paths, never a key's contents.
// Also who the console is: the admin identity's CN, read from the certificate itself.

#include <QJsonObject>
#include <QList>
#include <QSettings>
#include <QString>

#include "models/connectionoptions.h"

namespace cmq::admingui {

struct ConnectionProfile
{
    QString name;
    QList<ConnectionOptions> nodes;
    bool operator==(const ConnectionProfile &) const = default;
};

// In the order saved; a profile with the name of an existing one replaces it in place.
QList<ConnectionProfile> loadProfiles(QSettings &settings);
void saveProfile(QSettings &settings, const ConnectionProfile &profile);
void removeProfile(QSettings &settings, const QString &name);
// Adds `node` to the profile `name` (created when missing); false when it was already listed.
bool addNodeToProfile(QSettings &settings, const QString &name, const ConnectionOptions &node);

// The subject CN of the first certificate in the PEM file, empty when it cannot be read.
QString certificateCommonName(const QString &certPath);
// "host:port", the node as the status bar and the window title name it.
QString nodeName(const ConnectionOptions &options);
// A node's high-availability role from the snapshot's "cluster" section: "active",
// "standby (active: b at 127.0.0.1:5671)", or empty for a broker without one.
QString nodeRoleText(const QJsonObject &cluster);

} // namespace cmq::admingui
