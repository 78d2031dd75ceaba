#include "adminfixture.h"

#include <QCoreApplication>
#include <QStandardPaths>

#include "testenv.h"
#include "ui/mainwindow.h"

namespace cmq::test {

void isolateSettings()
{
    QCoreApplication::setOrganizationName("CipherMQ-tests");
    QStandardPaths::setTestModeEnabled(true);
}

quint16 enableAdmin(BrokerProcess &broker)
{
    const quint16 port = freePort();
    broker.set("admin.enabled", "true");
    broker.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(port));
    return port;
}

admingui::ConnectionOptions adminOptions(quint16 adminPort, const QString &identity,
                                         const QString &ca)
{
    admingui::ConnectionOptions o;
    o.host = "localhost";
    o.port = adminPort;
    o.caPath = certFile(ca);
    o.certPath = certFile(identity + ".crt");
    o.keyPath = certFile(identity + ".key");
    return o;
}

std::unique_ptr<admingui::MainWindow> openAdminWindow(quint16 adminPort, const QString &identity)
{
    auto window = std::make_unique<admingui::MainWindow>();
    window->session().setWatchIntervalMs(200);
    window->resize(1280, 800);
    window->show();
    window->connectTo(adminOptions(adminPort, identity));
    return window;
}

QString queueCell(admingui::MainWindow &window, const QString &queue, int column)
{
    const int row = window.queueModel().rowOf(queue);
    return row < 0 ? QString() : window.queueModel().index(row, column).data().toString();
}

QByteArray envelope(const QByteArray &id, const QByteArray &receiver)
{
    return R"({"message_id":")" + id + R"(","receiver_client_id":")" + receiver +
           R"(","enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"Y2lwaGVy"})";
}

} // namespace cmq::test
