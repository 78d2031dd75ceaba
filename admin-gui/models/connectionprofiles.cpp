#include "models/connectionprofiles.h"

#include <QSslCertificate>

namespace cmq::admingui {

namespace {

void writeProfiles(QSettings &settings, const QList<ConnectionProfile> &profiles)
{
    settings.remove("profiles"); // shorter lists must not leave old entries behind
    settings.beginWriteArray("profiles", int(profiles.size()));
    for (int i = 0; i < profiles.size(); ++i) {
        settings.setArrayIndex(i);
        settings.setValue("name", profiles[i].name);
        settings.beginWriteArray("nodes", int(profiles[i].nodes.size()));
        for (int n = 0; n < profiles[i].nodes.size(); ++n) {
            settings.setArrayIndex(n);
            writeConnection(settings, profiles[i].nodes[n]);
        }
        settings.endArray();
    }
    settings.endArray();
}

} // namespace

QList<ConnectionProfile> loadProfiles(QSettings &settings)
{
    QList<ConnectionProfile> profiles;
    const int size = settings.beginReadArray("profiles");
    for (int i = 0; i < size; ++i) {
        settings.setArrayIndex(i);
        ConnectionProfile profile;
        profile.name = settings.value("name").toString();
        const int nodes = settings.beginReadArray("nodes");
        for (int n = 0; n < nodes; ++n) {
            settings.setArrayIndex(n);
            profile.nodes.append(readConnection(settings));
        }
        settings.endArray();
        if (!profile.name.isEmpty())
            profiles.append(profile);
    }
    settings.endArray();
    return profiles;
}

void saveProfile(QSettings &settings, const ConnectionProfile &profile)
{
    QList<ConnectionProfile> profiles = loadProfiles(settings);
    const auto same = [&](const ConnectionProfile &p) { return p.name == profile.name; };
    if (const auto it = std::find_if(profiles.begin(), profiles.end(), same); it != profiles.end())
        *it = profile;
    else
        profiles.append(profile);
    writeProfiles(settings, profiles);
}

void removeProfile(QSettings &settings, const QString &name)
{
    QList<ConnectionProfile> profiles = loadProfiles(settings);
    profiles.removeIf([&](const ConnectionProfile &p) { return p.name == name; });
    writeProfiles(settings, profiles);
}

bool addNodeToProfile(QSettings &settings, const QString &name, const ConnectionOptions &node)
{
    ConnectionProfile profile{name, {}};
    for (const ConnectionProfile &p : loadProfiles(settings))
        if (p.name == name)
            profile = p;
    if (profile.nodes.contains(node))
        return false;
    profile.nodes.append(node);
    saveProfile(settings, profile);
    return true;
}

QString certificateCommonName(const QString &certPath)
{
    const QList<QSslCertificate> certificates =
        QSslCertificate::fromPath(certPath, QSsl::Pem, QSslCertificate::PatternSyntax::FixedString);
    if (certificates.isEmpty())
        return {};
    return certificates.constFirst().subjectInfo(QSslCertificate::CommonName).value(0);
}

QString nodeName(const ConnectionOptions &options)
{
    return QStringLiteral("%1:%2").arg(options.host).arg(options.port);
}

QString nodeRoleText(const QJsonObject &cluster)
{
    const QString role = cluster.value(u"role").toString();
    if (role != QLatin1String("standby"))
        return role;
    const QString id = cluster.value(u"active_node_id").toString();
    const QString address = cluster.value(u"active_address").toString();
    if (id.isEmpty() && address.isEmpty())
        return role;
    return QStringLiteral("standby (active: %1)")
        .arg(address.isEmpty() ? id : QStringLiteral("%1 at %2").arg(id, address));
}

} // namespace cmq::admingui
