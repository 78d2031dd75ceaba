// Bulk actions in the console (docs/ADMIN-GUI.md): the confirmation and summary texts on their
// own, then against a real broker with traffic: several queues selected, one confirmation that
// names each with its message count (and not the others), progress while the purges run, a
// summary, and only the selected queues emptied; a bulk disconnect closes the selected
// connections only; cancelling the confirmation changes nothing.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "adminfixture.h"
#include "testclient.h"
#include "ui/mainwindow.h"
#include "ui/tablepage.h"

using cmq::admingui::BulkAction;
using cmq::admingui::ConnectionTableModel;
using cmq::admingui::MainWindow;
using cmq::admingui::QueueTableModel;
using cmq::test::BrokerProcess;
using cmq::test::TestClient;

namespace {

constexpr int Deadline = cmq::test::GuiDeadline;

QString ready(MainWindow &window, const QString &queue)
{
    return cmq::test::queueCell(window, queue, QueueTableModel::Ready);
}

} // namespace

class tst_BulkActions : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void confirmationListsEveryTarget();
    void summaryCountsAndNamesFailures();
    void bulkPurgeEmptiesTheSelectedQueuesOnly();
    void bulkDisconnectClosesTheSelectedOnly();

private:
    std::unique_ptr<MainWindow> openWindow() { return cmq::test::openAdminWindow(m_adminPort); }

    BrokerProcess m_broker;
    quint16 m_adminPort = 0;
    std::unique_ptr<TestClient> m_receiver;
    std::unique_ptr<TestClient> m_sender;
};

void tst_BulkActions::initTestCase()
{
    cmq::test::isolateSettings();
    m_adminPort = cmq::test::enableAdmin(m_broker);
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    m_receiver = std::make_unique<TestClient>("receiver_1");
    m_sender = std::make_unique<TestClient>("sender_1");
    QVERIFY(m_receiver->connectTo(m_broker.port()));
    QVERIFY(m_sender->connectTo(m_broker.port()));
    QCOMPARE(m_receiver->request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    int n = 0;
    for (const auto &[name, count] : {std::pair{"bulk_a", 3}, {"bulk_b", 5}, {"bulk_keep", 4}}) {
        const QByteArray queue = QByteArray("receiver_1_") + name;
        QCOMPARE(m_receiver->request("declare_queue " + queue), "Queue declared");
        QCOMPARE(m_receiver->request("bind " + queue + " CipherMQ_exchange " + queue),
                 "Queue bound");
        for (int i = 0; i < count; ++i) {
            const QByteArray id = "bulk-" + QByteArray::number(++n);
            QCOMPARE(m_sender->request("publish CipherMQ_exchange " + queue + ' ' +
                                       cmq::test::envelope(id)),
                     "ACK " + id);
        }
    }
}

void tst_BulkActions::cleanupTestCase()
{
    m_receiver.reset();
    m_sender.reset();
    QVERIFY(m_broker.terminate());
}

void tst_BulkActions::confirmationListsEveryTarget()
{
    const QList<BulkAction::Target> targets{{"q1", "purge q1", 3}, {"q2", "purge q2", 0}};
    QCOMPARE(BulkAction::confirmationText("Purge", targets, "Gone for good."),
             QStringLiteral("Purge these 2 target(s), 3 message(s) in all?\n\n"
                            "• q1 — 3 message(s)\n• q2 — 0 message(s)\n\nGone for good."));
    QList<BulkAction::Target> many;
    for (int i = 0; i < 25; ++i)
        many.append({QStringLiteral("q%1").arg(i), QStringLiteral("purge q%1").arg(i), 1});
    const QString text = BulkAction::confirmationText("Purge", many, "x", 20);
    QVERIFY(text.contains("• q19 — 1 message(s)"));
    QVERIFY(!text.contains("• q20"));
    QVERIFY(text.contains("… and 5 more"));
    QVERIFY(text.startsWith("Purge these 25 target(s), 25 message(s) in all?"));
}

void tst_BulkActions::summaryCountsAndNamesFailures()
{
    QCOMPARE(BulkAction::summaryText("Purge",
                                     {{"q1", true, R"({"ok":true,"action":"purge","purged":3})"},
                                      {"q2", false, "Queue 'q2' not found"},
                                      {"q3", true, R"({"ok":true,"action":"purge","purged":2})"}}),
             QStringLiteral("Purge: 2 of 3 done, 5 message(s) dropped; failed: q2 (Queue 'q2' "
                            "not found)."));
    QCOMPARE(BulkAction::summaryText("Disconnect", {{"7", true, R"({"ok":true})"}}),
             QStringLiteral("Disconnect: 1 of 1 done."));
}

void tst_BulkActions::bulkPurgeEmptiesTheSelectedQueuesOnly()
{
    const auto window = openWindow();
    QTRY_COMPARE_WITH_TIMEOUT(ready(*window, "receiver_1_bulk_keep"), "4", Deadline);
    QCOMPARE(ready(*window, "receiver_1_bulk_a"), "3");
    QCOMPARE(ready(*window, "receiver_1_bulk_b"), "5");
    window->tabs()->setCurrentIndex(MainWindow::QueuesTab);
    QCOMPARE(window->queuesPage()->selectKeys({"receiver_1_bulk_a", "receiver_1_bulk_b"}), 2);

    // Cancelled: nothing happens.
    QString asked;
    window->setConfirm([&](const QString &, const QString &text) {
        asked = text;
        return false;
    });
    window->purgeSelectedQueue();
    QVERIFY(asked.startsWith("Purge these 2 target(s), 8 message(s) in all?"));
    QVERIFY(asked.contains("• receiver_1_bulk_a — 3 message(s)"));
    QVERIFY(asked.contains("• receiver_1_bulk_b — 5 message(s)"));
    QVERIFY(!asked.contains("bulk_keep"));
    QVERIFY(!window->bulkAction());

    int confirmations = 0;
    window->setConfirm([&](const QString &, const QString &) {
        ++confirmations;
        return true;
    });
    window->purgeSelectedQueue();
    QCOMPARE(confirmations, 1); // one confirmation for all of them
    QVERIFY(window->bulkAction());
    QStringList progress;
    connect(window->bulkAction(), &BulkAction::progress, this,
            [&](int done, int total, const QString &current) {
                progress << QStringLiteral("%1/%2 %3").arg(done).arg(total).arg(current);
            });
    QTRY_VERIFY_WITH_TIMEOUT(!window->bulkAction()->isRunning(), Deadline);
    QCOMPARE(progress, QStringList{"1/2 receiver_1_bulk_b"}); // the first was reported at start
    QCOMPARE(window->bannerText(), QStringLiteral("Purge: 2 of 2 done, 8 message(s) dropped."));
    QTRY_COMPARE_WITH_TIMEOUT(ready(*window, "receiver_1_bulk_a"), "0", Deadline);
    QTRY_COMPARE_WITH_TIMEOUT(ready(*window, "receiver_1_bulk_b"), "0", Deadline);
    QCOMPARE(ready(*window, "receiver_1_bulk_keep"), "4");
    // The broker agrees, and has both purges on its trail.
    TestClient ops("ops-admin");
    QVERIFY(ops.connectTo(m_adminPort));
    for (const QJsonValue &q : QJsonDocument::fromJson(ops.request("queues")).array()) {
        const QJsonObject o = q.toObject();
        QCOMPARE(o.value("ready").toInteger(),
                 o.value("name") == QLatin1String("receiver_1_bulk_keep") ? 4 : 0);
    }
    QStringList trail;
    for (const QJsonValue &e : QJsonDocument::fromJson(ops.request("audit")).array())
        trail << e["action"].toString() + u' ' + e["target"].toString();
    QCOMPARE(trail, (QStringList{"purge receiver_1_bulk_a", "purge receiver_1_bulk_b"}));
}

void tst_BulkActions::bulkDisconnectClosesTheSelectedOnly()
{
    TestClient first("svc-a"), second("svc-b"), kept("svc-c");
    for (TestClient *c : {&first, &second, &kept}) {
        QVERIFY(c->connectTo(m_broker.port()));
        QCOMPARE(c->request("get_public_key nobody"), "Public key not found");
    }
    const auto window = openWindow();
    const auto idOf = [&](const QString &cn) {
        ConnectionTableModel &m = window->connectionModel();
        for (int r = 0; r < m.rowCount(); ++r) {
            if (m.rowObject(r).value("cn").toString() == cn)
                return QString::number(m.rowObject(r).value("id").toInteger());
        }
        return QString();
    };
    QTRY_VERIFY_WITH_TIMEOUT(!idOf("svc-c").isEmpty(), Deadline);
    window->tabs()->setCurrentIndex(MainWindow::ConnectionsTab);
    QCOMPARE(window->connectionsPage()->selectKeys({idOf("svc-a"), idOf("svc-b")}), 2);
    QString asked;
    window->setConfirm([&](const QString &, const QString &text) {
        asked = text;
        return true;
    });
    window->disconnectSelectedConnection();
    QVERIFY2(asked.contains("(svc-a from 127.0.0.1)") && asked.contains("(svc-b from 127.0.0.1)"),
             qPrintable(asked));
    QVERIFY(!asked.contains("svc-c"));
    // The window needs the event loop to send its requests: wait on the banner first.
    QTRY_COMPARE_WITH_TIMEOUT(window->bannerText(), QStringLiteral("Disconnect: 2 of 2 done."),
                              Deadline);
    QVERIFY(first.waitForDisconnected(Deadline));
    QVERIFY(second.waitForDisconnected(Deadline));
    QCOMPARE(kept.request("get_public_key nobody"), "Public key not found");
}

QTEST_MAIN(tst_BulkActions)
#include "tst_bulkactions.moc"
