// The whole console against a real broker with real certificates and traffic: the queues
// table shows what the test created, the queue detail shows its bindings, consumer and depth,
// a purge from the UI empties the queue, export writes files that parse (promtool for the
// Prometheus one), the headless --export works, and the window reconnects after a broker
// restart. Every wait is a deadline on an observable state, never a fixed sleep. How a window
// connects (refusals, the connect dialog, profiles, F5, the alarm banner) is
// tst_mainwindowconnect.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "adminfixture.h"
#include "testclient.h"
#include "ui/mainwindow.h"
#include "ui/overviewpage.h"
#include "ui/queuedetaildialog.h"
#include "ui/tablepage.h"

using cmq::admingui::AdminSession;
using cmq::admingui::ConnectionOptions;
using cmq::admingui::ExportFormat;
using cmq::admingui::MainWindow;
using cmq::admingui::QueueBindingModel;
using cmq::admingui::QueueConsumerModel;
using cmq::admingui::QueueDetailDialog;
using cmq::admingui::QueueTableModel;
using cmq::test::BrokerProcess;
using cmq::test::envelope;
using cmq::test::TestClient;

namespace {

constexpr int Deadline = cmq::test::GuiDeadline;

QString cell(MainWindow &window, const QString &queue, int column)
{
    return cmq::test::queueCell(window, queue, column);
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
    void reconnectsAfterBrokerRestart();

private:
    ConnectionOptions options(const QString &identity) const
    {
        return cmq::test::adminOptions(m_adminPort, identity);
    }

    BrokerProcess m_broker;
    quint16 m_adminPort = 0;
    QList<TestClient *> m_clients;
    std::unique_ptr<MainWindow> m_window;
    QTemporaryDir m_dir;
};

void tst_MainWindow::initTestCase()
{
    cmq::test::isolateSettings();
    m_adminPort = cmq::test::enableAdmin(m_broker);
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

    m_window = cmq::test::openAdminWindow(m_adminPort);
    m_window->session().setReconnectDelayMs(300);
    QTRY_COMPARE_WITH_TIMEOUT(m_window->session().state(), AdminSession::State::Connected,
                              Deadline);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->snapshotCount() > 0, Deadline);
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

QTEST_MAIN(tst_MainWindow)
#include "tst_mainwindow.moc"
