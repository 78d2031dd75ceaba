// The Connections tab's columns at 1280x800, in the real window fed connections like those of
// scripts/screenshots.sh (docs/images/connections.png) but with a production-length certificate
// subject: the table needs no horizontal scrolling, because the certificate's subject, issuer
// and serial start hidden (the CN and the expiry stay; the header's column menu, tested in
// tst_queuecolumns, shows the others).

#include <QHeaderView>
#include <QJsonArray>
#include <QJsonObject>
#include <QScrollBar>
#include <QSettings>
#include <QStandardPaths>
#include <QtTest>

#include "ui/mainwindow.h"
#include "ui/tablepage.h"

using cmq::admingui::ConnectionTableModel;
using cmq::admingui::MainWindow;

namespace {

QJsonObject connection(int id, const QString &listener, const QString &cn, const QString &role)
{
    const QJsonObject certificate{
        {"subject", "CN=" + cn + ",OU=Payments Platform,O=Example Logistics GmbH,L=Hamburg,C=DE"},
        {"issuer", "CN=Example Logistics Issuing CA 2,O=Example Logistics GmbH,C=DE"},
        {"serial", "3f:a9:1c:77:04:be:52:e0:9d:11:6a:c3:28:f5:0b:94:7e:21:d8:60"},
        {"not_after", "2029-03-06T12:00:00Z"}};
    return {{"id", id},
            {"listener", listener},
            {"cn", cn},
            {"roles", QJsonArray{role}},
            {"address", "127.0.0.1"},
            {"port", 42924 + id},
            {"connected_at", "2026-12-02T14:07:28Z"},
            {"messages_in", 123456},
            {"messages_out", 4369000},
            {"bytes_in", 266749000.0},
            {"bytes_out", 4408434000.0},
            {"certificate", certificate}};
}

QJsonObject snapshot(double uptime)
{
    return {{"broker", QJsonObject{{"version", "0.1.0"}, {"uptime_seconds", uptime}}},
            {"connections", QJsonArray{connection(8, "data", "receiver_1", "receiver"),
                                       connection(301, "data", "worker-svc-1", "sender"),
                                       connection(379, "admin", "ops-admin", "admin")}}};
}

} // namespace

class tst_ConnectionColumns : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void fitsA1280PixelWindow();
};

void tst_ConnectionColumns::initTestCase()
{
    QCoreApplication::setOrganizationName("CipherMQ-tests"); // no saved layout of a user's
    QStandardPaths::setTestModeEnabled(true);
    QSettings().remove("layout"); // nor one of an earlier run: the defaults are under test
}

void tst_ConnectionColumns::fitsA1280PixelWindow()
{
    MainWindow window;
    window.resize(1280, 800);
    window.tabs()->setCurrentIndex(MainWindow::ConnectionsTab);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    for (int i = 0; i < 3; ++i)
        window.showSnapshot(snapshot(100 + i));
    QTableView *view = window.connectionsPage()->view();
    QHeaderView *header = view->horizontalHeader();
    QTRY_COMPARE(view->model()->rowCount(), 3);
    QTRY_VERIFY(header->sectionSize(ConnectionTableModel::Cn) > 60); // sized to the first data
    QVERIFY(header->isSectionHidden(ConnectionTableModel::Subject));
    QVERIFY(header->isSectionHidden(ConnectionTableModel::Issuer));
    QVERIFY(header->isSectionHidden(ConnectionTableModel::Serial));
    QVERIFY(!header->isSectionHidden(ConnectionTableModel::Cn));
    QVERIFY(!header->isSectionHidden(ConnectionTableModel::Expiry));
    QCOMPARE(view->horizontalScrollBar()->maximum(), 0);
}

QTEST_MAIN(tst_ConnectionColumns)
#include "tst_connectioncolumns.moc"
