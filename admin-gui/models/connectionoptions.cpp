#include "models/connectionoptions.h"

#include <QFileInfo>

#include "tls/tlsidentity.h"

namespace cmq::admingui {

bool ConnectionOptions::isComplete() const
{
    return !host.isEmpty() && port != 0 && !caPath.isEmpty() && !certPath.isEmpty() &&
           !keyPath.isEmpty();
}

QString ConnectionOptions::label() const
{
    return QStringLiteral("%1:%2 as %3").arg(host).arg(port).arg(QFileInfo(certPath).fileName());
}

QString ConnectionOptions::validate() const
{
    if (host.isEmpty())
        return QObject::tr("Enter the broker's host name.");
    if (port == 0)
        return QObject::tr("Enter the admin listener's port (admin.address, default 9091).");
    const std::pair<QString, QString> files[] = {{QObject::tr("CA certificate"), caPath},
                                                 {QObject::tr("admin certificate"), certPath},
                                                 {QObject::tr("private key"), keyPath}};
    for (const auto &[what, path] : files) {
        if (path.isEmpty())
            return QObject::tr("Choose the %1 file.").arg(what);
        if (!QFileInfo(path).isReadable())
            return QObject::tr("The %1 file %2 does not exist or is not readable.").arg(what, path);
    }
    return {};
}

Result<QSslConfiguration> ConnectionOptions::sslConfiguration() const
{
    const QString problem = validate();
    if (!problem.isEmpty())
        return Result<QSslConfiguration>::failure(problem);
    return tls::clientConfiguration({certPath, keyPath, caPath});
}

void ConnectionOptions::addTo(QCommandLineParser &parser)
{
    parser.addOptions({
        {"host", QObject::tr("Broker host (must match its certificate)."), "host", "localhost"},
        {"port", QObject::tr("Admin listener port."), "port", "9091"},
        {"ca", QObject::tr("CA certificate (PEM) the broker is verified against."), "file"},
        {"cert", QObject::tr("Admin client certificate (PEM)."), "file"},
        {"key", QObject::tr("Private key of the admin certificate (PEM)."), "file"},
    });
}

ConnectionOptions ConnectionOptions::fromParser(const QCommandLineParser &parser)
{
    ConnectionOptions options;
    options.host = parser.value("host");
    options.port = parser.value("port").toUShort();
    options.caPath = parser.value("ca");
    options.certPath = parser.value("cert");
    options.keyPath = parser.value("key");
    return options;
}

void writeConnection(QSettings &settings, const ConnectionOptions &options)
{
    settings.setValue("host", options.host);
    settings.setValue("port", options.port);
    settings.setValue("ca", options.caPath);
    settings.setValue("cert", options.certPath);
    settings.setValue("key", options.keyPath); // the path only: the key stays in its file
}

ConnectionOptions readConnection(QSettings &settings)
{
    ConnectionOptions options;
    options.host = settings.value("host").toString();
    options.port = quint16(settings.value("port").toUInt());
    options.caPath = settings.value("ca").toString();
    options.certPath = settings.value("cert").toString();
    options.keyPath = settings.value("key").toString();
    return options;
}

void rememberConnection(QSettings &settings, const ConnectionOptions &options, int max)
{
    QList<ConnectionOptions> list = recentConnections(settings);
    list.removeAll(options);
    list.prepend(options);
    if (list.size() > max)
        list.resize(max);
    settings.beginWriteArray("recent", int(list.size()));
    for (int i = 0; i < list.size(); ++i) {
        settings.setArrayIndex(i);
        writeConnection(settings, list[i]);
    }
    settings.endArray();
}

QList<ConnectionOptions> recentConnections(QSettings &settings)
{
    QList<ConnectionOptions> list;
    const int size = settings.beginReadArray("recent");
    for (int i = 0; i < size; ++i) {
        settings.setArrayIndex(i);
        list.append(readConnection(settings));
    }
    settings.endArray();
    return list;
}

} // namespace cmq::admingui
