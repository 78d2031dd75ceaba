// The whole console against a real broker with real certificates and traffic: the queues
// table shows what the test created, the queue detail shows its bindings, consumer and depth,
// a purge from the UI empties the queue, export writes files that parse (promtool for the
// Prometheus one), the headless --export works, refusals read clearly in the window and in
// the connect dialog, and the window reconnects after a broker restart. Every wait is a
// deadline on an observable state, never a fixed sleep. A saved profile listing two brokers
// opens both side by side, each window naming its admin CN and node; F5 fetches a snapshot.
// The alarm banner shows the broker's memory alarm and a client certificate that expires soon.

#include <QApplication>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"
#include "ui/connectdialog.h"
#include "ui/mainwindow.h"
#include "ui/overviewpage.h"
#include "ui/queuedetaildialog.h"
#include "ui/tablepage.h"

using cmq::admingui::AdminSession;
using cmq::admingui::ConnectDialog;
using cmq::admingui::ConnectionOptions;
using cmq::admingui::ExportFormat;
using cmq::admingui::MainWindow;
using cmq::admingui::QueueBindingModel;
using cmq::admingui::QueueConsumerModel;
using cmq::admingui::QueueDetailDialog;
using cmq::admingui::QueueTableModel;
using cmq::test::BrokerProcess;
using cmq::test::certFile;
using cmq::test::freePort;
using cmq::test::TestClient;

namespace {

// Generous: the machine may be busy with other builds and tests; a pass takes far less.
constexpr int Deadline = 30000;

QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1",)"
           R"("enc_session_key":"ZW5j","nonce":"bm9uY2U=","ciphertext":"Y2lwaGVy"})";
}

QString cell(MainWindow &window, const QString &queue, int column)
{
    const int row = window.queueModel().rowOf(queue);
    return row < 0 ? QString() : window.queueModel().index(row, column).data().toString();
}

} // namespace

class tst_MainWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void queuesTableShowsTraffic();
    void queueDetail();
    void purgeFromTheUi();
    void cancelledPurgeKeepsMessages();
    void exportFormats();
    void headlessExport();
    void refused_data();
    void refused();
    void connectDialogShowsFailure();
    void connectDialogConnects();
    void reconnectsAfterBrokerRestart();
    void profileOpensEveryBroker();
    void refreshFetchesASnapshotNow();
    void alarmBanner();

private:
    ConnectionOptions options(const QString &identity, const QString &ca = "ca.crt") const;
    void connectWindow(MainWindow &window);

    BrokerProcess m_broker;
    quint16 m_adminPort = 0;
    QList<TestClient *> m_clients;
    std::unique_ptr<MainWindow> m_window;
    QTemporaryDir m_dir;
};

ConnectionOptions tst_MainWindow::options(const QString &identity, const QString &ca) const
{
    ConnectionOptions o;
    o.host = "localhost";
    o.port = m_adminPort;
    o.caPath = certFile(ca);
    o.certPath = certFile(identity + ".crt");
    o.keyPath = certFile(identity + ".key");
    return o;
}

void tst_MainWindow::initTestCase()
{
    QCoreApplication::setOrganizationName("CipherMQ-tests"); // keep QSettings away from users
    QStandardPaths::setTestModeEnabled(true);
    m_adminPort = freePort();
    m_broker.set("admin.enabled", "true");
    m_broker.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(m_adminPort));
    QVERIFY2(m_broker.start(), m_broker.output().constData());

    auto *receiver = new TestClient("receiver_1");
    auto *sender = new TestClient("sender_1");
    auto *consumer = new TestClient("receiver_1");
    m_clients << receiver << sender << consumer;
    QVERIFY(receiver->connectTo(m_broker.port()));
    QVERIFY(sender->connectTo(m_broker.port()));
    QVERIFY(consumer->connectTo(m_broker.port()));
    QCOMPARE(receiver->request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    for (const QByteArray name : {"gui_a", "gui_b", "gui_c"}) {
        QCOMPARE(receiver->request("declare_queue receiver_1_" + name), "Queue declared");
        QCOMPARE(
            receiver->request("bind receiver_1_" + name + " CipherMQ_exchange receiver_1_" + name),
            "Queue bound");
    }
    for (int i = 0; i < 3; ++i) {
        const QByteArray id = "gui-a-" + QByteArray::number(i);
        QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_gui_a " + envelope(id)),
                 "ACK " + id);
    }
    QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_gui_b " + envelope("gui-b-0")),
             QByteArray("ACK gui-b-0"));
    // gui_c has a consumer holding two unacknowledged deliveries.
    QCOMPARE(consumer->request("consume receiver_1_gui_c"), "Subscribed to queue");
    for (const QByteArray id : {"gui-c-0", "gui-c-1"}) {
        QCOMPARE(sender->request("publish CipherMQ_exchange receiver_1_gui_c " + envelope(id)),
                 "ACK " + id);
        QVERIFY(consumer->readLineStartingWith("Message: " + id).startsWith("Message: "));
    }

    m_window = std::make_unique<MainWindow>();
    m_window->session().setWatchIntervalMs(200);
    m_window->session().setReconnectDelayMs(300);
    m_window->show();
    connectWindow(*m_window);
}

void tst_MainWindow::connectWindow(MainWindow &window)
{
    window.connectTo(options("ops-admin"));
    QTRY_COMPARE_WITH_TIMEOUT(window.session().state(), AdminSession::State::Connected, Deadline);
    QTRY_VERIFY_WITH_TIMEOUT(window.snapshotCount() > 0, Deadline);
}

void tst_MainWindow::cleanupTestCase()
{
    m_window.reset();
    qDeleteAll(m_clients);
    QVERIFY(m_broker.terminate());
}

void tst_MainWindow::queuesTableShowsTraffic()
{
    QTRY_COMPARE_WITH_TIMEOUT(cell(*m_window, "receiver_1_gui_a", QueueTableModel::Ready), "3",
                              Deadline);
    QCOMPARE(cell(*m_window, "receiver_1_gui_b", QueueTableModel::Ready), QStringLiteral("1"));
    QCOMPARE(cell(*m_window, "receiver_1_gui_c", QueueTableModel::Ready), QStringLiteral("0"));
    QCOMPARE(cell(*m_window, "receiver_1_gui_c", QueueTableModel::Unacked), QStringLiteral("2"));
    QCOMPARE(cell(*m_window, "receiver_1_gui_c", QueueTableModel::Consumers), QStringLiteral("1"));
    QCOMPARE(cell(*m_window, "receiver_1_gui_a", QueueTableModel::Owner),
             QStringLiteral("receiver_1"));
    QCOMPARE(cell(*m_window, "receiver_1_gui_a", QueueTableModel::Unacked), QStringLiteral("0"));
    QVERIFY(m_window->statusText().startsWith("Connected to localhost:"));
    QCOMPARE(m_window->overviewPage()->figure("ready"), QStringLiteral("4"));
    QCOMPARE(m_window->overviewPage()->figure("unacked"), QStringLiteral("2"));
    QVERIFY(m_window->exchangeModel().findItems("CipherMQ_exchange").size() == 1);
    // receiver, sender, consumer and this console
    QCOMPARE(m_window->connectionModel().rowCount(), 4);

    // The filter narrows the table through the proxy, not the model.
    m_window->queuesPage()->filter()->setText("gui_b");
    QCOMPARE(m_window->queuesPage()->proxy()->rowCount(), 1);
    m_window->queuesPage()->filter()->clear();
}

void tst_MainWindow::queueDetail()
{
    // Opened from the table's selection, as the Details… button and a double-click do.
    m_window->tabs()->setCurrentIndex(MainWindow::QueuesTab);
    QVERIFY(m_window->queuesPage()->selectKey("receiver_1_gui_c"));
    m_window->openSelectedQueueDetail();
    QueueDetailDialog *detail = m_window->queueDetail("receiver_1_gui_c");
    QVERIFY(detail);
    QVERIFY(QTest::qWaitForWindowExposed(detail));
    // It starts from the last snapshot, with the depth history the window already has.
    QCOMPARE(detail->figure("unacked"), QStringLiteral("2"));
    QCOMPARE(detail->figure("ready"), QStringLiteral("0"));
    QCOMPARE(detail->figure("owner"), QStringLiteral("receiver_1"));
    QCOMPARE(detail->figure("overflow"),
             cell(*m_window, "receiver_1_gui_c", QueueTableModel::Overflow));
    QVERIFY(detail->depthPointCount() >= 1);

    const QueueBindingModel &bindings = detail->bindings();
    QCOMPARE(bindings.rowCount(), 1);
    QCOMPARE(bindings.index(0, QueueBindingModel::Exchange).data().toString(),
             QStringLiteral("CipherMQ_exchange"));
    QCOMPARE(bindings.index(0, QueueBindingModel::RoutingKey).data().toString(),
             QStringLiteral("receiver_1_gui_c"));

    const QueueConsumerModel &consumers = detail->consumers();
    QCOMPARE(consumers.rowCount(), 1);
    QCOMPARE(consumers.index(0, QueueConsumerModel::Cn).data().toString(),
             QStringLiteral("receiver_1"));
    QCOMPARE(consumers.index(0, QueueConsumerModel::Unacked).data().toString(),
             QStringLiteral("2"));

    // The chart keeps growing with the stream; opening it again raises the same window.
    const int points = detail->depthPointCount();
    QTRY_VERIFY_WITH_TIMEOUT(detail->depthPointCount() >= points + 2, Deadline);
    QCOMPARE(m_window->openQueueDetail("receiver_1_gui_c"), detail);
    detail->close();
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->queueDetail("receiver_1_gui_c"), Deadline);
}

void tst_MainWindow::purgeFromTheUi()
{
    QString asked;
    m_window->setConfirm([&](const QString &, const QString &text) {
        asked = text;
        return true;
    });
    m_window->tabs()->setCurrentIndex(MainWindow::QueuesTab);
    QVERIFY(m_window->queuesPage()->selectKey("receiver_1_gui_a"));
    m_window->purgeSelectedQueue();
    QVERIFY2(asked.contains("'receiver_1_gui_a'") && asked.contains("3 ready message"),
             qPrintable(asked));
    QTRY_COMPARE_WITH_TIMEOUT(m_window->bannerText(),
                              QStringLiteral("Purged 3 message(s) from 'receiver_1_gui_a'."),
                              Deadline);
    QTRY_COMPARE_WITH_TIMEOUT(cell(*m_window, "receiver_1_gui_a", QueueTableModel::Ready), "0",
                              Deadline);
    QCOMPARE(cell(*m_window, "receiver_1_gui_b", QueueTableModel::Ready), QStringLiteral("1"));
    // The selection survived the live updates.
    QCOMPARE(m_window->queuesPage()->selectedSourceRow(),
             m_window->queueModel().rowOf("receiver_1_gui_a"));
}

void tst_MainWindow::cancelledPurgeKeepsMessages()
{
    bool asked = false;
    m_window->setConfirm([&](const QString &, const QString &) {
        asked = true;
        return false;
    });
    QVERIFY(m_window->queuesPage()->selectKey("receiver_1_gui_b"));
    m_window->purgeSelectedQueue();
    QVERIFY(asked);
    const int seen = m_window->snapshotCount();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->snapshotCount() >= seen + 3, Deadline);
    QCOMPARE(cell(*m_window, "receiver_1_gui_b", QueueTableModel::Ready), QStringLiteral("1"));
}

void tst_MainWindow::exportFormats()
{
    const QString prom = m_dir.filePath("snapshot.prom");
    const QString json = m_dir.filePath("snapshot.json");
    const QString csv = m_dir.filePath("snapshot.csv");
    QVERIFY(m_window->exportTo(prom, ExportFormat::Prometheus));
    QVERIFY(m_window->exportTo(json, ExportFormat::Json));
    QVERIFY(m_window->exportTo(csv, ExportFormat::Csv));

    QFile jsonFile(json);
    QVERIFY(jsonFile.open(QIODevice::ReadOnly));
    QJsonParseError error;
    const QJsonObject snapshot = QJsonDocument::fromJson(jsonFile.readAll(), &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);
    QVERIFY(snapshot.value("queues").toArray().size() >= 2);

    QFile csvFile(csv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = csvFile.readAll().trimmed().split('\n');
    QVERIFY(lines.first().startsWith("kind,name,owner,ready"));
    for (const QByteArray &line : lines)
        QCOMPARE(line.count(','), 15);
    QVERIFY(lines.contains("queue,receiver_1_gui_b,receiver_1,1,0,0,1,0,0,,,,,,,"));

    // promtool comes with the test packages (scripts/packages-test.txt): missing is a failure.
    const QString promtool = QStandardPaths::findExecutable("promtool");
    QVERIFY2(!promtool.isEmpty(), "promtool is not installed (Debian package prometheus)");
    QProcess check;
    check.setStandardInputFile(prom);
    check.start(promtool, {"check", "metrics"});
    QVERIFY(check.waitForFinished(Deadline));
    QVERIFY2(check.exitStatus() == QProcess::NormalExit && check.exitCode() == 0,
             check.readAllStandardError().constData());
    QFile promFile(prom);
    QVERIFY(promFile.open(QIODevice::ReadOnly));
    const QByteArray promText = promFile.readAll();
    QVERIFY(promText.contains("\n# TYPE "));
    QVERIFY(promText.endsWith("# EOF\n"));
}

void tst_MainWindow::headlessExport()
{
    // Built before this test (a CMake dependency): missing is a failure.
    const QString binary = QStringLiteral(CMQ_ADMIN_BIN);
    QVERIFY2(QFile::exists(binary), qPrintable(binary + " is not built"));
    const ConnectionOptions o = options("ops-admin");
    const QStringList connection{"--host", o.host,   "--port", QString::number(o.port),
                                 "--ca",   o.caPath, "--cert", o.certPath,
                                 "--key",  o.keyPath};
    const QString out = m_dir.filePath("headless.json");
    QProcess process;
    process.start(binary, connection + QStringList{"--export", out, "--format", "json"});
    QVERIFY(process.waitForFinished(Deadline));
    QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
    QFile file(out);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(QJsonDocument::fromJson(file.readAll()).object().contains("queues"));

    // A non-admin certificate: exit code 1 and the reason on stderr.
    const ConnectionOptions sender = options("sender_1");
    process.start(binary, {"--host", "localhost", "--port", QString::number(o.port), "--ca",
                           o.caPath, "--cert", sender.certPath, "--key", sender.keyPath, "--export",
                           m_dir.filePath("refused.json"), "--format", "json"});
    QVERIFY(process.waitForFinished(Deadline));
    QCOMPARE(process.exitCode(), 1);
    QVERIFY(process.readAllStandardError().contains("does not have the Admin role"));
}

void tst_MainWindow::refused_data()
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

void tst_MainWindow::refused()
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

void tst_MainWindow::connectDialogShowsFailure()
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

void tst_MainWindow::connectDialogConnects()
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

void tst_MainWindow::reconnectsAfterBrokerRestart()
{
    QVERIFY(m_window->queuesPage()->selectKey("receiver_1_gui_b"));
    QVERIFY(m_broker.terminate());
    QTRY_COMPARE_WITH_TIMEOUT(m_window->session().state(), AdminSession::State::Reconnecting,
                              Deadline);
    // The window keeps its last data while the broker is away.
    QCOMPARE(cell(*m_window, "receiver_1_gui_b", QueueTableModel::Ready), QStringLiteral("1"));
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    QTRY_COMPARE_WITH_TIMEOUT(m_window->session().state(), AdminSession::State::Connected,
                              Deadline);
    const int seen = m_window->snapshotCount();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->snapshotCount() > seen, Deadline);
    QCOMPARE(cell(*m_window, "receiver_1_gui_b", QueueTableModel::Ready), QStringLiteral("1"));
    QCOMPARE(m_window->queuesPage()->selectedSourceRow(),
             m_window->queueModel().rowOf("receiver_1_gui_b"));
}

void tst_MainWindow::profileOpensEveryBroker()
{
    BrokerProcess second;
    const quint16 secondAdminPort = freePort();
    second.set("admin.enabled", "true");
    second.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(secondAdminPort));
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

void tst_MainWindow::refreshFetchesASnapshotNow()
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

void tst_MainWindow::alarmBanner()
{
    // A broker of its own: a 1 MiB memory budget, and a sender whose certificate runs out in
    // 10 days (tests/certs/gen.sh).
    BrokerProcess broker;
    const quint16 adminPort = freePort();
    broker.set("admin.enabled", "true");
    broker.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(adminPort));
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

QTEST_MAIN(tst_MainWindow)
#include "tst_mainwindow.moc"
