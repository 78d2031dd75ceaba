// What the console remembers and how it is driven from the keyboard, without a broker: saved
// profiles round-trip through QSettings (file paths only, never a key's contents), the admin
// identity is the certificate's CN (not its file name), Ctrl+1..7 switch tabs, Ctrl+F goes to
// the filter, column widths, sort order and window geometry come back in a new window, the
// highlight colours follow a dark palette, and the About box names the versions.

#include <QApplication>
#include <QFile>
#include <QHeaderView>
#include <QSslSocket>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "models/connectionprofiles.h"
#include "models/connectiontablemodel.h"
#include "models/palettecolors.h"
#include "testenv.h"
#include "ui/bannerstyle.h"
#include "ui/mainwindow.h"
#include "ui/tablepage.h"

using namespace cmq::admingui;
using cmq::test::certFile;

namespace {

ConnectionOptions node(const QString &host, quint16 port, const QString &identity)
{
    ConnectionOptions o;
    o.host = host;
    o.port = port;
    o.caPath = certFile("ca.crt");
    o.certPath = certFile(identity + ".crt");
    o.keyPath = certFile(identity + ".key");
    return o;
}

double contrast(const QColor &a, const QColor &b)
{
    return std::abs(a.lightnessF() - b.lightnessF());
}

} // namespace

class tst_ConsoleSettings : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void profilesRoundTrip();
    void profilesStorePathsNotKeys();
    void commonNameComesFromTheCertificate();
    void tabShortcuts();
    void filterShortcut();
    void layoutRestoredInANewWindow();
    void darkPalette();
    void aboutNamesVersions();

private:
    QTemporaryDir m_dir;
};

void tst_ConsoleSettings::initTestCase()
{
    QCoreApplication::setOrganizationName("CipherMQ-tests"); // keep QSettings away from users
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_dir.isValid());
    QVERIFY2(QFile::exists(certFile("ops-admin.crt")), "run through ctest (certs fixture)");
}

void tst_ConsoleSettings::profilesRoundTrip()
{
    const QString path = m_dir.filePath("profiles.ini");
    const ConnectionProfile staging{"staging", {node("localhost", 9091, "ops-admin")}};
    const ConnectionProfile production{
        "production",
        {node("mq1.example", 9091, "ops-admin"), node("mq2.example", 9191, "ops-admin-2")}};
    {
        QSettings settings(path, QSettings::IniFormat);
        saveProfile(settings, staging);
        saveProfile(settings, production);
    }
    {
        QSettings settings(path, QSettings::IniFormat);
        QCOMPARE(loadProfiles(settings), (QList<ConnectionProfile>{staging, production}));
        // Replacing keeps the place; a shorter node list leaves nothing of the longer one.
        saveProfile(settings, {"production", {production.nodes.last()}});
        QVERIFY(addNodeToProfile(settings, "staging", production.nodes.first()));
        QVERIFY(!addNodeToProfile(settings, "staging", production.nodes.first()));
    }
    QSettings settings(path, QSettings::IniFormat);
    const QList<ConnectionProfile> loaded = loadProfiles(settings);
    QCOMPARE(loaded.size(), 2);
    QCOMPARE(loaded[0].name, "staging");
    QCOMPARE(loaded[0].nodes, (QList<ConnectionOptions>{staging.nodes[0], production.nodes[0]}));
    QCOMPARE(loaded[1], (ConnectionProfile{"production", {production.nodes.last()}}));
    removeProfile(settings, "staging");
    QCOMPARE(loadProfiles(settings), (QList<ConnectionProfile>{loaded[1]}));
    settings.sync();
    QVERIFY(!QFile(path).readAll().contains("mq1.example"));
}

void tst_ConsoleSettings::profilesStorePathsNotKeys()
{
    const QString path = m_dir.filePath("keys.ini");
    {
        QSettings settings(path, QSettings::IniFormat);
        saveProfile(settings, {"p", {node("localhost", 9091, "ops-admin")}});
    }
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    QVERIFY(text.contains("ops-admin.key"));
    QVERIFY(!text.contains("PRIVATE KEY"));
    QFile key(certFile("ops-admin.key"));
    QVERIFY(key.open(QIODevice::ReadOnly));
    const QList<QByteArray> keyLines = key.readAll().split('\n');
    QVERIFY(keyLines.size() > 2);
    QVERIFY(!text.contains(keyLines[1])); // not even a line of the key's base64
}

void tst_ConsoleSettings::commonNameComesFromTheCertificate()
{
    // A certificate whose file name says nothing about its CN.
    const QString renamed = m_dir.filePath("client-2031.pem");
    QVERIFY(QFile::copy(certFile("ops-admin.crt"), renamed));
    QCOMPARE(certificateCommonName(renamed), "ops-admin");
    QCOMPARE(certificateCommonName(certFile("ops-admin-2.crt")), "ops-admin-2");
    QCOMPARE(certificateCommonName(m_dir.filePath("missing.crt")), QString());

    MainWindow window;
    ConnectionOptions options = node("127.0.0.1", 1, "ops-admin"); // nothing listens on port 1
    options.certPath = renamed;
    window.connectTo(options);
    QCOMPARE(window.identityText(), "Admin ops-admin · 127.0.0.1:1");
    QVERIFY(window.windowTitle().contains("127.0.0.1:1"));
    window.session().close();
}

void tst_ConsoleSettings::tabShortcuts()
{
    MainWindow window;
    window.show();
    QApplication::setActiveWindow(&window);
    QVERIFY(QTest::qWaitForWindowActive(&window));
    const int tabs = window.tabs()->count();
    QCOMPARE(tabs, 7); // Overview … Rate limits, Audit, Talkers
    for (int i = tabs - 1; i >= 0; --i) {
        QTest::keyClick(&window, Qt::Key(Qt::Key_1 + i), Qt::ControlModifier);
        QCOMPARE(window.tabs()->currentIndex(), i);
    }
}

void tst_ConsoleSettings::filterShortcut()
{
    MainWindow window;
    window.show();
    QApplication::setActiveWindow(&window);
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keyClick(&window, Qt::Key_4, Qt::ControlModifier); // Connections
    QTest::keyClick(&window, Qt::Key_F, Qt::ControlModifier);
    QTRY_VERIFY(window.connectionsPage()->filter()->hasFocus());
    QTest::keyClicks(QApplication::focusWidget(), "svc");
    QCOMPARE(window.connectionsPage()->filter()->text(), "svc");
    QVERIFY(!window.queuesPage()->filter()->hasFocus());
}

void tst_ConsoleSettings::layoutRestoredInANewWindow()
{
    const QString path = m_dir.filePath("layout.ini");
    QByteArray geometry;
    {
        MainWindow window;
        window.resize(1111, 666);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.queuesPage()->view()->horizontalHeader()->resizeSection(QueueTableModel::Owner, 177);
        window.queuesPage()->view()->sortByColumn(QueueTableModel::Ready, Qt::DescendingOrder);
        window.connectionsPage()->view()->horizontalHeader()->resizeSection(1, 133);
        window.tabs()->setCurrentIndex(MainWindow::ConnectionsTab);
        QSettings settings(path, QSettings::IniFormat);
        window.saveLayout(settings);
    }
    MainWindow window;
    QCOMPARE_NE(
        window.queuesPage()->view()->horizontalHeader()->sectionSize(QueueTableModel::Owner), 177);
    QSettings settings(path, QSettings::IniFormat);
    window.restoreLayout(settings);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QHeaderView *queues = window.queuesPage()->view()->horizontalHeader();
    QCOMPARE(queues->sectionSize(QueueTableModel::Owner), 177);
    QCOMPARE(queues->sortIndicatorSection(), int(QueueTableModel::Ready));
    QCOMPARE(queues->sortIndicatorOrder(), Qt::DescendingOrder);
    QCOMPARE(window.queuesPage()->proxy()->sortColumn(), int(QueueTableModel::Ready));
    QCOMPARE(window.connectionsPage()->view()->horizontalHeader()->sectionSize(1), 133);
    QCOMPARE(window.tabs()->currentIndex(), int(MainWindow::ConnectionsTab));
    QCOMPARE(window.size(), QSize(1111, 666));
}

void tst_ConsoleSettings::darkPalette()
{
    const QPalette original = QApplication::palette();
    QPalette dark;
    dark.setColor(QPalette::Window, QColor(0x20, 0x20, 0x24));
    dark.setColor(QPalette::WindowText, QColor(0xe8, 0xe8, 0xe8));
    dark.setColor(QPalette::Base, QColor(0x18, 0x18, 0x1c));
    dark.setColor(QPalette::Text, QColor(0xe8, 0xe8, 0xe8));
    QApplication::setPalette(dark);
    const auto restore = qScopeGuard([&] { QApplication::setPalette(original); });

    QVERIFY(isDarkPalette());
    // Highlighted cells keep the palette's (light) text readable: a dark background.
    for (const bool strong : {false, true})
        QVERIFY2(contrast(warningBackground(strong), dark.color(QPalette::Text)) > 0.45,
                 qPrintable(warningBackground(strong).name()));
    QVERIFY(contrast(errorText(), dark.color(QPalette::Base)) > 0.45);
    QVERIFY(errorBannerStyle() != errorBannerStyle(false));

    ConnectionTableModel model;
    const QString soon = QDateTime::currentDateTimeUtc().addDays(3).toString(Qt::ISODateWithMs);
    model.update(QJsonArray{
        QJsonObject{{"id", 1}, {"cn", "svc"}, {"certificate", QJsonObject{{"not_after", soon}}}}});
    QCOMPARE(model.rowCount(), 1);
    const QColor background = model.index(0, ConnectionTableModel::Expiry)
                                  .data(Qt::BackgroundRole)
                                  .value<QBrush>()
                                  .color();
    QVERIFY2(contrast(background, dark.color(QPalette::Text)) > 0.45,
             qPrintable(background.name()));

    QApplication::setPalette(original);
    QVERIFY(!isDarkPalette());
    QVERIFY(contrast(warningBackground(), original.color(QPalette::Text)) > 0.45);
}

void tst_ConsoleSettings::aboutNamesVersions()
{
    const QString text = MainWindow::aboutText();
    QVERIFY(text.contains(QStringLiteral(CIPHERMQ_VERSION)));
    QVERIFY(text.contains(QString::fromLatin1(qVersion())));
    QVERIFY(QSslSocket::sslLibraryVersionString().startsWith("OpenSSL"));
    QVERIFY(text.contains(QSslSocket::sslLibraryVersionString()));
}

QTEST_MAIN(tst_ConsoleSettings)
#include "tst_consolesettings.moc"
