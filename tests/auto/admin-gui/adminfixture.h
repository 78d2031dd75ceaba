#pragma once
// What the admin-gui tests that drive the real window against a real broker share: settings
// kept away from the user's, a broker with its admin listener on a free port, the connection
// options of a test identity, a window watching that broker, and reading the Queues tab.

#include <memory>

#include <QByteArray>
#include <QString>

#include "brokerprocess.h"
#include "models/connectionoptions.h"

namespace cmq::admingui {
class MainWindow;
}

namespace cmq::test {

// Generous: the machine may be busy with other builds and tests; a pass takes far less.
constexpr int GuiDeadline = 30000;

// QSettings (layout, profiles, recent connections) in a test location, never the user's.
void isolateSettings();

// Turns on `broker`'s admin listener on a free port (before start()) and returns the port.
quint16 enableAdmin(BrokerProcess &broker);

// The options for connecting to the admin listener at `adminPort` as `identity` (its .crt and
// .key in the test certificates), trusting `ca`.
admingui::ConnectionOptions adminOptions(quint16 adminPort, const QString &identity = "ops-admin",
                                         const QString &ca = "ca.crt");

// A 1280x800 window, shown, watching every 200 ms, connecting to `adminPort` as `identity`.
// Not waited for: the tests wait for what they look at.
std::unique_ptr<admingui::MainWindow> openAdminWindow(quint16 adminPort,
                                                      const QString &identity = "ops-admin");

// The text of `queue`'s cell in `column` of the Queues tab's model; empty while it is not listed.
QString queueCell(admingui::MainWindow &window, const QString &queue, int column);

// A well-formed envelope for `receiver` (the broker cannot read it; tests compare it back).
QByteArray envelope(const QByteArray &id, const QByteArray &receiver = "receiver_1");

} // namespace cmq::test
