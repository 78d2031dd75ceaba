// The console's Audit tab and read-only operators against a real broker with traffic
// (admin.readonly_cns, docs/ADMIN-GUI.md): a purge made from the UI appears on the Audit tab
// with who did it; a read-only identity sees its actions greyed with the reason, and when it
// purges anyway the broker's refusal is shown, nothing is purged and the refusal is on the
// trail; the export (File → Export… and ciphermq-admin --export) carries the trail. Every
// wait is a deadline on an observable state.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "brokerprocess.h"
#include "testclient.h"
#include "testenv.h"
#include "ui/mainwindow.h"
#include "ui/tablepage.h"

using cmq::admingui::AdminSession;
using cmq::admingui::AuditTableModel;
using cmq::admingui::ConnectionOptions;
using cmq::admingui::ExportFormat;
using cmq::admingui::MainWindow;
using cmq::admingui::QueueTableModel;
using cmq::test::BrokerProcess;
using cmq::test::certFile;
using cmq::test::freePort;
using cmq::test::TestClient;

namespace {

constexpr int Deadline = 30000;

QString queueCell(MainWindow &window, const QString &queue, int column)
{
    const int row = window.queueModel().rowOf(queue);
    return row < 0 ? QString() : window.queueModel().index(row, column).data().toString();
}

// "action target result cn" of every audit row, in id order.
QStringList auditRows(MainWindow &window)
{
    AuditTableModel &model = window.auditModel();
    QMap<qint64, QString> rows;
    for (int r = 0; r < model.rowCount(); ++r) {
        const auto text = [&](int column) { return model.index(r, column).data().toString(); };
        rows.insert(text(AuditTableModel::Id).toLongLong(),
                    QStringList{text(AuditTableModel::Action), text(AuditTableModel::Target),
                                text(AuditTableModel::Result), text(AuditTableModel::Admin)}
                        .join(u' '));
    }
    return rows.values();
}

} // namespace

class tst_MainWindowAudit : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void purgeFromTheUiIsAudited();
    void readOnlyIdentityCannotPurge();
    void exportCarriesTheTrail();

private:
    ConnectionOptions options(const QString &identity) const;
    std::unique_ptr<MainWindow> openWindow(const QString &identity);

    BrokerProcess m_broker;
    quint16 m_adminPort = 0;
    QList<TestClient *> m_clients;
    QTemporaryDir m_dir;
};

ConnectionOptions tst_MainWindowAudit::options(const QString &identity) const
{
    ConnectionOptions o;
    o.host = "localhost";
    o.port = m_adminPort;
    o.caPath = certFile("ca.crt");
    o.certPath = certFile(identity + ".crt");
    o.keyPath = certFile(identity + ".key");
    return o;
}

std::unique_ptr<MainWindow> tst_MainWindowAudit::openWindow(const QString &identity)
{
    auto window = std::make_unique<MainWindow>();
    window->session().setWatchIntervalMs(200);
    window->show();
    window->connectTo(options(identity));
    return window;
}

void tst_MainWindowAudit::initTestCase()
{
    QCoreApplication::setOrganizationName("CipherMQ-tests"); // keep QSettings away from users
    QStandardPaths::setTestModeEnabled(true);
    m_adminPort = freePort();
    m_broker.set("admin.enabled", "true");
    m_broker.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(m_adminPort));
    m_broker.set("admin.readonly_cns", R"(["ops-admin-2"])");
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    auto *receiver = new TestClient("receiver_1");
    auto *sender = new TestClient("sender_1");
    m_clients << receiver << sender;
    QVERIFY(receiver->connectTo(m_broker.port()));
    QVERIFY(sender->connectTo(m_broker.port()));
    QCOMPARE(receiver->request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    for (const QByteArray name : {"audit_a", "audit_b"}) {
        const QByteArray queue = "receiver_1_" + name;
        QCOMPARE(receiver->request("declare_queue " + queue), "Queue declared");
        QCOMPARE(receiver->request("bind " + queue + " CipherMQ_exchange " + queue), "Queue bound");
        for (int i = 0; i < 2; ++i) {
            const QByteArray id = name + '-' + QByteArray::number(i);
            QCOMPARE(sender->request("publish CipherMQ_exchange " + queue + R"( {"message_id":")" +
                                     id +
                                     R"(","receiver_client_id":"receiver_1",)"
                                     R"("enc_session_key":"ZQ==","nonce":"bg==",)"
                                     R"("ciphertext":"Yw=="})"),
                     "ACK " + id);
        }
    }
}

void tst_MainWindowAudit::cleanupTestCase()
{
    qDeleteAll(m_clients);
    QVERIFY(m_broker.terminate());
}

void tst_MainWindowAudit::purgeFromTheUiIsAudited()
{
    const auto window = openWindow("ops-admin");
    QTRY_COMPARE_WITH_TIMEOUT(queueCell(*window, "receiver_1_audit_a", QueueTableModel::Ready), "2",
                              Deadline);
    QVERIFY(window->actionsRefusal().isEmpty());
    QVERIFY(window->queuesPage()->actionsNote().isEmpty());
    QVERIFY(window->selectTab("audit"));
    QCOMPARE(window->tabs()->currentIndex(), int(MainWindow::AuditTab));
    QCOMPARE(window->auditModel().rowCount(), 0);

    window->setConfirm([](const QString &, const QString &) { return true; });
    window->tabs()->setCurrentIndex(MainWindow::QueuesTab);
    QVERIFY(window->queuesPage()->selectKey("receiver_1_audit_a"));
    window->purgeSelectedQueue();
    QTRY_COMPARE_WITH_TIMEOUT(window->bannerText(),
                              QStringLiteral("Purged 2 message(s) from 'receiver_1_audit_a'."),
                              Deadline);
    QTRY_COMPARE_WITH_TIMEOUT(auditRows(*window),
                              QStringList{"purge receiver_1_audit_a ok ops-admin"}, Deadline);
    const AuditTableModel &model = window->auditModel();
    QCOMPARE(model.index(0, AuditTableModel::Address).data().toString(),
             QStringLiteral("127.0.0.1"));
    QCOMPARE(model.index(0, AuditTableModel::Detail).data().toString(), QStringLiteral("purged=2"));
    QVERIFY(!model.isFailure(0));

    // Another admin's action reaches this window through the watch stream's audit.last_id.
    TestClient other("ops-admin");
    QVERIFY(other.connectTo(m_adminPort));
    QVERIFY(other.request("purge receiver_1_missing").startsWith("Error: "));
    QTRY_COMPARE_WITH_TIMEOUT(window->auditModel().rowCount(), 2, Deadline);
    QVERIFY(auditRows(*window).last() == "purge receiver_1_missing error ops-admin");
}

void tst_MainWindowAudit::readOnlyIdentityCannotPurge()
{
    const auto window = openWindow("ops-admin-2");
    QTRY_COMPARE_WITH_TIMEOUT(queueCell(*window, "receiver_1_audit_b", QueueTableModel::Ready), "2",
                              Deadline);
    // The broker told the console its role: the actions are greyed, with the reason.
    QTRY_VERIFY_WITH_TIMEOUT(!window->actionsRefusal().isEmpty(), Deadline);
    QVERIFY2(window->actionsRefusal().contains("admin.readonly_cns"),
             qPrintable(window->actionsRefusal()));
    QVERIFY(window->identityText().contains("(read-only)"));
    window->tabs()->setCurrentIndex(MainWindow::QueuesTab);
    QVERIFY(window->queuesPage()->selectKey("receiver_1_audit_b"));
    const auto buttons = window->queuesPage()->findChildren<QPushButton *>();
    int greyed = 0;
    for (QPushButton *button : buttons) {
        // The page bar's buttons move the view, not the broker (and are hidden while unpaged).
        if (button == window->queuesPage()->previousPageButton() ||
            button == window->queuesPage()->nextPageButton())
            continue;
        if (button->text() == QStringLiteral("Details…")) {
            QVERIFY(button->isEnabled()); // looking is allowed
        } else {
            QVERIFY2(!button->isEnabled(), qPrintable(button->text()));
            QCOMPARE(button->toolTip(), window->actionsRefusal());
            ++greyed;
        }
    }
    QCOMPARE(greyed, 2); // Purge…, Delete…
    QCOMPARE(window->queuesPage()->actionsNote(), QStringLiteral("Read-only: actions are refused"));
    QVERIFY(!window->connectionsPage()->actionsNote().isEmpty());

    // Purging anyway (the same code path as the button): the broker refuses, and says why.
    window->setConfirm([](const QString &, const QString &) { return true; });
    window->purgeSelectedQueue();
    QTRY_VERIFY_WITH_TIMEOUT(
        window->bannerText().contains("Forbidden: certificate CN 'ops-admin-2' is read-only"),
        Deadline);
    QVERIFY2(window->bannerText().startsWith("'purge receiver_1_audit_b' failed: "),
             qPrintable(window->bannerText()));
    QTRY_VERIFY_WITH_TIMEOUT(
        auditRows(*window).contains("purge receiver_1_audit_b refused ops-admin-2"), Deadline);
    const int seen = window->snapshotCount();
    QTRY_VERIFY_WITH_TIMEOUT(window->snapshotCount() >= seen + 2, Deadline);
    QCOMPARE(queueCell(*window, "receiver_1_audit_b", QueueTableModel::Ready), QStringLiteral("2"));
    const AuditTableModel &model = window->auditModel();
    for (int row = 0; row < model.rowCount(); ++row) {
        if (model.index(row, AuditTableModel::Result).data() == QStringLiteral("refused"))
            QVERIFY(model.isFailure(row)); // drawn as a failure
    }
}

void tst_MainWindowAudit::exportCarriesTheTrail()
{
    const auto window = openWindow("ops-admin-2"); // a read-only operator may export
    QTRY_COMPARE_WITH_TIMEOUT(window->session().state(), AdminSession::State::Connected, Deadline);
    const QString path = m_dir.filePath("audit.json");
    QVERIFY(window->exportTo(path, ExportFormat::Json));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QJsonObject exported = QJsonDocument::fromJson(file.readAll()).object();
    QVERIFY(exported.value("audit_entries").toArray().size() >= 1);
    QCOMPARE(exported.value("session").toObject().value("read_only").toBool(), true);

    const QString binary = QStringLiteral(CMQ_ADMIN_BIN);
    const ConnectionOptions o = options("ops-admin");
    const QString headless = m_dir.filePath("headless.json");
    QProcess process;
    process.start(binary,
                  {"--host", o.host, "--port", QString::number(o.port), "--ca", o.caPath, "--cert",
                   o.certPath, "--key", o.keyPath, "--export", headless, "--format", "json"});
    QVERIFY(process.waitForFinished(Deadline));
    QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
    QFile headlessFile(headless);
    QVERIFY(headlessFile.open(QIODevice::ReadOnly));
    const QJsonArray entries =
        QJsonDocument::fromJson(headlessFile.readAll()).object().value("audit_entries").toArray();
    QVERIFY(!entries.isEmpty());
    QCOMPARE(entries.first().toObject().value("action").toString(), QStringLiteral("purge"));
}

QTEST_MAIN(tst_MainWindowAudit)
#include "tst_mainwindowaudit.moc"
