// How the console connects, against a real broker with the test certificates: refusals
// (non-admin certificate, wrong CA, broker down) read clearly in the banner and the connect
// dialog; the dialog reports a failed attempt and closes once connected; a saved profile
// listing two brokers opens both side by side, each window naming its admin CN and node; F5
// fetches a snapshot; the alarm banner shows the broker's memory alarm and a client
// certificate that expires soon. Split from tst_mainwindow (the window's data and actions).
// Every wait is a deadline on an observable state, never a fixed sleep.

#include <QApplication>
#include <QPointer>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include "adminfixture.h"
#include "models/connectionprofiles.h"
#include "testclient.h"
#include "testenv.h"
#include "ui/connectdialog.h"
#include "ui/mainwindow.h"

using cmq::admingui::AdminSession;
using cmq::admingui::ConnectDialog;
using cmq::admingui::ConnectionOptions;
using cmq::admingui::MainWindow;
using cmq::test::BrokerProcess;
using cmq::test::certFile;
using cmq::test::freePort;
using cmq::test::TestClient;

namespace {

constexpr int Deadline = cmq::test::GuiDeadline;

} // namespace

class tst_MainWindowConnect : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void refused_data();
    void refused();
    void connectDialogShowsFailure();
    void connectDialogConnects();
    void profileOpensEveryBroker();
    void refreshFetchesASnapshotNow();
    void alarmBanner();

private:
    ConnectionOptions options(const QString &identity, const QString &ca = "ca.crt") const
    {
        return cmq::test::adminOptions(m_adminPort, identity, ca);
    }
    void connectWindow(MainWindow &window);

    BrokerProcess m_broker;
    quint16 m_adminPort = 0;
    std::unique_ptr<TestClient> m_receiver;
};

void tst_MainWindowConnect::initTestCase()
{
    cmq::test::isolateSettings();
    m_adminPort = cmq::test::enableAdmin(m_broker);
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    // A queue for the windows to list (the connect dialog's and the profile's).
    m_receiver = std::make_unique<TestClient>("receiver_1");
    QVERIFY(m_receiver->connectTo(m_broker.port()));
    QCOMPARE(m_receiver->request("declare_queue receiver_1_gui_b"), "Queue declared");
}

void tst_MainWindowConnect::connectWindow(MainWindow &window)
{
    window.connectTo(options("ops-admin"));
    QTRY_COMPARE_WITH_TIMEOUT(window.session().state(), AdminSession::State::Connected, Deadline);
    QTRY_VERIFY_WITH_TIMEOUT(window.snapshotCount() > 0, Deadline);
}

void tst_MainWindowConnect::cleanupTestCase()
{
    m_receiver.reset();
    QVERIFY(m_broker.terminate());
}

void tst_MainWindowConnect::refused_data()
{
    QTest::addColumn<QString>("identity");
    QTest::addColumn<QString>("ca");
    QTest::addColumn<bool>("brokerDown");
    QTest::addColumn<QString>("message");
    QTest::addColumn<int>("state");
    QTest::newRow("non-admin certificate")
        << "sender_1"
        << "ca.crt" << false
        << "The broker refused this certificate: certificate CN 'sender_1' does not have the "
           "Admin role"
        << int(AdminSession::State::Refused);
    QTest::newRow("wrong CA") << "ops-admin"
                              << "other-ca.crt" << false << "is not signed by the selected CA"
                              << int(AdminSession::State::Refused);
    QTest::newRow("broker down") << "ops-admin"
                                 << "ca.crt" << true << "The broker is unreachable at localhost:"
                                 << int(AdminSession::State::Reconnecting);
}

void tst_MainWindowConnect::refused()
{
    QFETCH(QString, identity);
    QFETCH(QString, ca);
    QFETCH(bool, brokerDown);
    QFETCH(QString, message);
    QFETCH(int, state);
    MainWindow window;
    window.session().setReconnectDelayMs(500);
    window.show();
    ConnectionOptions o = options(identity, ca);
    if (brokerDown)
        o.port = freePort(); // nothing listens there
    window.connectTo(o);
    QTRY_COMPARE_WITH_TIMEOUT(int(window.session().state()), state, Deadline);
    QVERIFY2(window.bannerText().contains(message), qPrintable(window.bannerText()));
    QVERIFY(window.statusText().contains(message));
    QCOMPARE(window.snapshotCount(), 0);
    // A refusal cannot be fixed by retrying: the connect dialog opens to pick another
    // identity, with the same sentence. An unreachable broker is retried in the background.
    if (state == int(AdminSession::State::Refused)) {
        QVERIFY(window.connectDialog());
        QVERIFY(window.connectDialog()->isVisible());
        QVERIFY2(window.connectDialog()->messageText().contains(message),
                 qPrintable(window.connectDialog()->messageText()));
    } else {
        QVERIFY(!window.connectDialog());
    }
}

void tst_MainWindowConnect::connectDialogShowsFailure()
{
    // Started from the dialog, a failed attempt is reported in the dialog and not retried.
    MainWindow window;
    window.show();
    window.showConnectDialog();
    ConnectDialog *dialog = window.connectDialog();
    QVERIFY(dialog);
    ConnectionOptions o = options("ops-admin");
    o.keyPath = certFile("no-such.key");
    dialog->setOptions(o);
    dialog->accept();
    QVERIFY2(dialog->messageText().contains("no-such.key"), qPrintable(dialog->messageText()));
    QCOMPARE(window.session().state(), AdminSession::State::Disconnected);

    o = options("ops-admin");
    o.port = freePort(); // nothing listens there
    dialog->setOptions(o);
    dialog->accept();
    QTRY_VERIFY2_WITH_TIMEOUT(dialog->messageText().contains("unreachable"),
                              qPrintable(dialog->messageText()), Deadline);
    QVERIFY(dialog->isVisible());
    QCOMPARE(window.session().state(), AdminSession::State::Disconnected);
    QVERIFY(window.bannerText().contains("unreachable"));
}

void tst_MainWindowConnect::connectDialogConnects()
{
    MainWindow window;
    window.session().setWatchIntervalMs(200);
    window.show();
    window.showConnectDialog();
    QPointer<ConnectDialog> dialog = window.connectDialog();
    QVERIFY(dialog);
    dialog->setOptions(options("ops-admin"));
    dialog->accept();
    QTRY_COMPARE_WITH_TIMEOUT(window.session().state(), AdminSession::State::Connected, Deadline);
    QTRY_VERIFY_WITH_TIMEOUT(!dialog, Deadline); // closed and deleted once connected
    QTRY_VERIFY_WITH_TIMEOUT(window.queueModel().rowOf("receiver_1_gui_b") >= 0, Deadline);
}

void tst_MainWindowConnect::profileOpensEveryBroker()
{
    BrokerProcess second;
    const quint16 secondAdminPort = cmq::test::enableAdmin(second);
    QVERIFY2(second.start(), second.output().constData());
    TestClient client("receiver_1");
    QVERIFY(client.connectTo(second.port()));
    QCOMPARE(client.request("declare_queue receiver_1_only_on_second"), "Queue declared");

    ConnectionOptions secondNode = options("ops-admin-2");
    secondNode.port = secondAdminPort;
    const cmq::admingui::ConnectionProfile profile{"two brokers",
                                                   {options("ops-admin"), secondNode}};
    QTemporaryDir dir;
    QSettings settings(dir.filePath("profiles.ini"), QSettings::IniFormat);
    cmq::admingui::saveProfile(settings, profile);
    const auto saved = cmq::admingui::loadProfiles(settings);
    QCOMPARE(saved.size(), 1);

    MainWindow first;
    first.session().setWatchIntervalMs(200);
    first.show();
    const QList<MainWindow *> opened = first.openProfile(saved.first());
    QCOMPARE(opened.size(), 1);
    std::unique_ptr<MainWindow> other(opened.first());
    for (MainWindow *window : {&first, other.get()}) {
        QTRY_COMPARE_WITH_TIMEOUT(window->session().state(), AdminSession::State::Connected,
                                  Deadline);
        QTRY_VERIFY_WITH_TIMEOUT(window->snapshotCount() > 0, Deadline);
        QCOMPARE(window->profileName(), "two brokers");
    }
    // Each window shows its own broker, and names who it is and where.
    QCOMPARE(first.identityText(),
             QStringLiteral("Admin ops-admin · localhost:%1").arg(m_adminPort));
    QCOMPARE(other->identityText(),
             QStringLiteral("Admin ops-admin-2 · localhost:%1").arg(secondAdminPort));
    QTRY_VERIFY_WITH_TIMEOUT(other->queueModel().rowOf("receiver_1_only_on_second") >= 0, Deadline);
    QVERIFY(first.queueModel().rowOf("receiver_1_only_on_second") < 0);
    QVERIFY(first.queueModel().rowOf("receiver_1_gui_b") >= 0);
    QVERIFY(other->queueModel().rowOf("receiver_1_gui_b") < 0);
    other.reset();
    first.session().close();
    QVERIFY(second.terminate());
}

void tst_MainWindowConnect::refreshFetchesASnapshotNow()
{
    MainWindow window;
    window.session().setWatchIntervalMs(60000); // the longest: no second snapshot without F5
    window.show();
    connectWindow(window);
    QApplication::setActiveWindow(&window);
    QVERIFY(QTest::qWaitForWindowActive(&window));
    const int before = window.snapshotCount();
    QTest::keyClick(&window, Qt::Key_F5);
    QTRY_COMPARE_WITH_TIMEOUT(window.snapshotCount(), before + 1, Deadline);
    window.session().close();
}

void tst_MainWindowConnect::alarmBanner()
{
    // A broker of its own: a 1 MiB memory budget, and a sender whose certificate runs out in
    // 10 days (tests/certs/gen.sh).
    BrokerProcess broker;
    const quint16 adminPort = cmq::test::enableAdmin(broker);
    broker.set("performance.memory_budget_mb", "1");
    broker.set("acl.sender_cns", R"(["sender_1", "expiring-soon"])");
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("declare_queue receiver_1_alarm"), "Queue declared");
    QCOMPARE(receiver.request("bind receiver_1_alarm CipherMQ_exchange receiver_1_alarm"),
             "Queue bound");

    MainWindow window;
    window.session().setWatchIntervalMs(200);
    window.show();
    ConnectionOptions o = options("ops-admin");
    o.port = adminPort;
    window.connectTo(o);
    QTRY_VERIFY_WITH_TIMEOUT(window.snapshotCount() > 0, Deadline);
    QCOMPARE(window.alarmText(), QString());

    TestClient soon("expiring-soon");
    QVERIFY(soon.connectTo(broker.port()));
    QTRY_VERIFY_WITH_TIMEOUT(window.alarmText().startsWith(
                                 "The client certificate of 'expiring-soon' (serial "),
                             Deadline);
    QVERIFY2(window.alarmText().contains(" expires in 9 day(s)") ||
                 window.alarmText().contains(" expires in 10 day(s)"),
             qPrintable(window.alarmText()));

    // 0.98 MB, twice: the first fills 93% of the 1 MiB budget, the second raises the alarm.
    const auto big = [](const QByteArray &id) {
        return R"({"message_id":")" + id +
               R"(","receiver_client_id":"receiver_1","enc_session_key":"ZW5j",)"
               R"("nonce":"bm9uY2U=","ciphertext":")" +
               QByteArray(980000, 'A') + R"("})";
    };
    QCOMPARE(soon.request("publish CipherMQ_exchange receiver_1_alarm " + big("big-1")),
             "ACK big-1");
    QVERIFY(soon.request("publish CipherMQ_exchange receiver_1_alarm " + big("big-2"))
                .startsWith("Error: Memory alarm: "));
    QTRY_VERIFY_WITH_TIMEOUT(window.alarmText().startsWith("Memory alarm: the broker holds "),
                             Deadline);
    QVERIFY(window.alarmText().contains("\nThe client certificate of 'expiring-soon'"));

    // Drained: the memory line goes, the expiry warning stays while the client is connected.
    QCOMPARE(receiver.request("fetch receiver_1_alarm").left(15), "Message: big-1 ");
    QCOMPARE(receiver.request("ack big-1"), "ACK_CONFIRMED big-1");
    QTRY_VERIFY_WITH_TIMEOUT(!window.alarmText().contains("Memory alarm"), Deadline);
    QVERIFY(window.alarmText().startsWith("The client certificate of 'expiring-soon'"));
    soon.disconnect();
    QTRY_COMPARE_WITH_TIMEOUT(window.alarmText(), QString(), Deadline);
    window.session().close();
    QVERIFY(broker.terminate());
}

QTEST_MAIN(tst_MainWindowConnect)
#include "tst_mainwindowconnect.moc"
