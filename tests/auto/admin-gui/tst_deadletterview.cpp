// The queue detail's Dead letters tab (docs/ADMIN-GUI.md): the model on its own (reasons,
// replies to other requests ignored, the requeue request, confirmation and result texts),
// then the real window against a real broker: a message nacked with `drop` from a queue with
// a dead-letter exchange shows up in the dead-letter queue's tab with its reason, original
// queue, time and delivery count; a read-only identity sees Requeue… greyed with the reason
// and, requeueing anyway, the broker's refusal; the admin's Requeue… (after a confirmation
// naming the queue and the count) sends it back, and the original queue delivers it again.
// The Queues tab shows the queue's TTL, dead-letter exchange and delivery limit, the
// Exchanges tab the exchange types. Every wait is a deadline on an observable state.

#include <memory>

#include <QJsonArray>
#include <QJsonObject>
#include <QPushButton>
#include <QtTest>

#include "adminfixture.h"
#include "testclient.h"
#include "ui/mainwindow.h"
#include "ui/queuedetaildialog.h"

using cmq::admingui::DeadLetterModel;
using cmq::admingui::DeadLetterPanel;
using cmq::admingui::MainWindow;
using cmq::admingui::QueueTableModel;
using cmq::test::BrokerProcess;
using cmq::test::queueCell;
using cmq::test::TestClient;

namespace {

constexpr int Deadline = cmq::test::GuiDeadline;
const QByteArray Inbox = "both-svc_in";
const QByteArray DeadLetters = "both-svc_dlq";

QJsonObject deadLetter(const QString &id, const QString &reason, const QString &origin,
                       int deliveries)
{
    return QJsonObject{{"message_id", id},
                       {"sender", "sender_1"},
                       {"routing_key", origin},
                       {"bytes", 612},
                       {"reason", reason},
                       {"original_queue", origin},
                       {"dead_lettered_at", "2025-01-31T10:00:00.123Z"},
                       {"delivery_count", deliveries}};
}

QByteArray envelope(const QByteArray &id)
{
    return cmq::test::envelope(id, "both-svc");
}

// The Type column of an exchange's row on the Exchanges tab.
QString exchangeType(MainWindow &window, const QString &exchange)
{
    const auto &model = window.exchangeModel();
    for (int row = 0; row < model.rowCount(); ++row) {
        if (model.index(row, 0).data().toString() == exchange)
            return model.index(row, 1).data().toString();
    }
    return {};
}

QString cell(const DeadLetterModel &model, int row, int column)
{
    return model.index(row, column).data().toString();
}

} // namespace

class tst_DeadLetterView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void reasons_data();
    void reasons();
    void modelRepliesAndRequeueTexts();
    void deadLetterAndRequeueInTheWindow();
};

void tst_DeadLetterView::reasons_data()
{
    QTest::addColumn<QString>("reason");
    QTest::addColumn<QString>("shown");
    QTest::newRow("nack drop") << "rejected"
                               << "rejected (nack … drop)";
    QTest::newRow("ttl") << "expired"
                         << "expired (TTL)";
    QTest::newRow("drop-head") << "overflow"
                               << "overflow (drop-head)";
    QTest::newRow("poison") << "delivery_limit"
                            << "delivery limit";
    QTest::newRow("from a newer broker") << "quarantined"
                                         << "quarantined";
}

void tst_DeadLetterView::reasons()
{
    QFETCH(QString, reason);
    QFETCH(QString, shown);
    DeadLetterModel model;
    model.setQueue("q_dlq");
    QVERIFY(model.applyReply(model.request(), QJsonArray{deadLetter("m-1", reason, "q_in", 2)}));
    QCOMPARE(cell(model, 0, DeadLetterModel::Reason), shown);
}

void tst_DeadLetterView::modelRepliesAndRequeueTexts()
{
    DeadLetterModel model;
    model.setQueue("svc_dlq");
    model.setFetchCount(3);
    QCOMPARE(model.request(), QStringLiteral("dead_letters svc_dlq 3"));
    QVERIFY(!model.isLoaded());
    QCOMPARE(model.requeueRequest(), QString()); // nothing listed, nothing to requeue
    // Another queue's list (the reply names no queue: the request line tells them apart).
    QVERIFY(!model.applyReply("dead_letters other_dlq 3",
                              QJsonArray{deadLetter("x", "expired", "o", 0)}));
    QCOMPARE(model.rowCount(), 0);

    QVERIFY(model.applyReply(model.request(),
                             QJsonArray{deadLetter("m-1", "rejected", "svc_in", 1),
                                        deadLetter("m-2", "delivery_limit", "svc_b", 5)}));
    QVERIFY(model.isLoaded());
    QVERIFY(!model.mayHoldMore());
    QCOMPARE(cell(model, 1, DeadLetterModel::MessageId), QStringLiteral("m-2"));
    QCOMPARE(cell(model, 1, DeadLetterModel::OriginalQueue), QStringLiteral("svc_b"));
    QCOMPARE(cell(model, 1, DeadLetterModel::Deliveries), QStringLiteral("5"));
    QCOMPARE(cell(model, 1, DeadLetterModel::DeadLetteredAt),
             QStringLiteral("2025-01-31 10:00:00.123"));
    QCOMPARE(cell(model, 1, DeadLetterModel::Sender), QStringLiteral("sender_1"));
    QCOMPARE(cell(model, 1, DeadLetterModel::Size), QStringLiteral("612"));
    QCOMPARE(model.requeueRequest(), QStringLiteral("requeue svc_dlq 2"));
    QCOMPARE(model.requeueConfirmation(),
             QStringLiteral("Requeue 2 dead letter(s) from 'svc_dlq' back to the queue(s) they "
                            "came from (svc_b, svc_in)? They join the back of those queues as "
                            "new messages, without their dead-letter record."));

    // As many as asked for: the broker may hold more, and the confirmation says the rest stay.
    QVERIFY(
        model.applyReply(model.request(), QJsonArray{deadLetter("m-1", "rejected", "svc_in", 1),
                                                     deadLetter("m-2", "rejected", "svc_in", 1),
                                                     deadLetter("m-3", "rejected", "svc_in", 1)}));
    QVERIFY(model.mayHoldMore());
    QCOMPARE(model.requeueRequest(), QStringLiteral("requeue svc_dlq 3"));
    QVERIFY(model.requeueConfirmation().endsWith(
        " The queue may hold more than these 3; the others stay."));

    QCOMPARE(DeadLetterModel::requeueResult(
                 true, R"({"action":"requeue","ok":true,"queue":"svc_dlq","requeued":3})"),
             QStringLiteral("Requeued 3 message(s) from 'svc_dlq' to the queues they came from."));
    QCOMPARE(DeadLetterModel::requeueResult(false, "Queue 'svc_dlq' not found"),
             QStringLiteral("Requeue failed: Queue 'svc_dlq' not found"));
}

void tst_DeadLetterView::deadLetterAndRequeueInTheWindow()
{
    cmq::test::isolateSettings();
    BrokerProcess broker;
    const quint16 adminPort = cmq::test::enableAdmin(broker);
    broker.set("admin.readonly_cns", R"(["ops-admin-2"])");
    QVERIFY2(broker.start(), broker.output().constData());

    // both-svc's inbox dead-letters to both-svc_dlx (fanout), which feeds both-svc_dlq.
    TestClient owner("both-svc");
    QVERIFY(owner.connectTo(broker.port()));
    QCOMPARE(owner.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(owner.request("declare_exchange both-svc_dlx fanout"), "Exchange declared");
    QCOMPARE(owner.request("declare_exchange both-svc_topics topic"), "Exchange declared");
    QCOMPARE(owner.request("declare_queue " + Inbox), "Queue declared");
    QCOMPARE(owner.request("declare_queue " + DeadLetters), "Queue declared");
    QCOMPARE(owner.request("bind " + Inbox + " CipherMQ_exchange " + Inbox), "Queue bound");
    QCOMPARE(owner.request("bind " + DeadLetters + " both-svc_dlx " + DeadLetters), "Queue bound");
    QCOMPARE(owner.request("queue_policy " + Inbox +
                           " 0 drop-head 600000 dlx=both-svc_dlx dlx_key=both-svc_parked "
                           "delivery_limit=4"),
             "Queue policy set");
    TestClient sender("sender_1");
    QVERIFY(sender.connectTo(broker.port()));
    QCOMPARE(sender.request("publish CipherMQ_exchange " + Inbox + ' ' + envelope("r-1")),
             "ACK r-1");
    QCOMPARE(owner.request("fetch " + Inbox), "Message: r-1 " + envelope("r-1"));
    QCOMPARE(owner.request("nack r-1 drop"), "NACK_CONFIRMED r-1");

    const auto window = cmq::test::openAdminWindow(adminPort);
    QTRY_COMPARE_WITH_TIMEOUT(queueCell(*window, DeadLetters, QueueTableModel::Ready), "1",
                              Deadline);
    // The Queues tab: the inbox's TTL (s), dead-letter exchange → key and delivery limit; the
    // dead-letter queue has none of them.
    QCOMPARE(queueCell(*window, Inbox, QueueTableModel::MessageTtl), QStringLiteral("600"));
    QCOMPARE(queueCell(*window, Inbox, QueueTableModel::DeadLetter),
             QStringLiteral("both-svc_dlx → both-svc_parked"));
    QCOMPARE(queueCell(*window, Inbox, QueueTableModel::DeliveryLimit), QStringLiteral("4"));
    QCOMPARE(queueCell(*window, DeadLetters, QueueTableModel::MessageTtl), QStringLiteral("none"));
    QCOMPARE(queueCell(*window, DeadLetters, QueueTableModel::DeadLetter), QString());
    QCOMPARE(queueCell(*window, DeadLetters, QueueTableModel::DeliveryLimit),
             QStringLiteral("none"));
    // The Exchanges tab: each exchange's type.
    QCOMPARE(exchangeType(*window, "CipherMQ_exchange"), QStringLiteral("direct"));
    QCOMPARE(exchangeType(*window, "both-svc_dlx"), QStringLiteral("fanout"));
    QCOMPARE(exchangeType(*window, "both-svc_topics"), QStringLiteral("topic"));

    // A read-only identity lists the dead letter but cannot requeue it.
    {
        const auto viewer = cmq::test::openAdminWindow(adminPort, "ops-admin-2");
        cmq::admingui::QueueDetailDialog *detail = viewer->openQueueDetail(DeadLetters);
        detail->showDeadLettersTab();
        DeadLetterPanel &panel = detail->deadLetters();
        QTRY_COMPARE_WITH_TIMEOUT(panel.model().rowCount(), 1, Deadline);
        QTRY_VERIFY_WITH_TIMEOUT(panel.requeueToolTip().contains("admin.readonly_cns"), Deadline);
        QVERIFY(!panel.requeueAllowed());
        QVERIFY(panel.findChild<QPushButton *>("requeueButton")
                    ->toolTip()
                    .contains("read-only", Qt::CaseInsensitive));
        // Requeueing anyway (the button's code path): the broker refuses and says why.
        panel.setConfirm([](const QString &, const QString &) { return true; });
        panel.requeueListed();
        QTRY_VERIFY_WITH_TIMEOUT(panel.resultText().startsWith("Requeue failed: Forbidden"),
                                 Deadline);
        QVERIFY(panel.statusText().contains("Forbidden"));
        QTRY_VERIFY_WITH_TIMEOUT(viewer->bannerText().contains("Forbidden"), Deadline);
    }
    QCOMPARE(queueCell(*window, DeadLetters, QueueTableModel::Ready), QStringLiteral("1"));

    cmq::admingui::QueueDetailDialog *detail = window->openQueueDetail(DeadLetters);
    detail->showDeadLettersTab();
    DeadLetterPanel &panel = detail->deadLetters();
    const DeadLetterModel &model = panel.model();
    QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, Deadline);
    QCOMPARE(cell(model, 0, DeadLetterModel::MessageId), QStringLiteral("r-1"));
    QCOMPARE(cell(model, 0, DeadLetterModel::Reason), QStringLiteral("rejected (nack … drop)"));
    QCOMPARE(cell(model, 0, DeadLetterModel::OriginalQueue), QString::fromUtf8(Inbox));
    QCOMPARE(cell(model, 0, DeadLetterModel::Deliveries), QStringLiteral("1"));
    QCOMPARE(cell(model, 0, DeadLetterModel::Sender), QStringLiteral("sender_1"));
    // The time is the broker's (UTC), a moment ago.
    QDateTime at = QDateTime::fromString(cell(model, 0, DeadLetterModel::DeadLetteredAt),
                                         QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
    QVERIFY(at.isValid());
    at.setTimeSpec(Qt::UTC);
    QVERIFY2(qAbs(at.secsTo(QDateTime::currentDateTimeUtc())) < 300, qPrintable(at.toString()));
    QCOMPARE(panel.statusText(), QStringLiteral("1 dead letter(s)."));
    QVERIFY(panel.requeueAllowed());
    // Nothing of the envelope.
    for (int c = 0; c < model.columnCount(); ++c)
        QVERIFY(!cell(model, 0, c).contains("Y2lwaGVy"));

    // Requeue…: a confirmation naming the queue and the count; cancelled, nothing moves.
    QStringList asked;
    panel.setConfirm([&](const QString &, const QString &text) {
        asked << text;
        return false;
    });
    panel.findChild<QPushButton *>("requeueButton")->click();
    QCOMPARE(asked.size(), 1);
    QVERIFY2(asked.first().startsWith("Requeue 1 dead letter(s) from 'both-svc_dlq' back to the "
                                      "queue(s) they came from (both-svc_in)?"),
             qPrintable(asked.first()));
    QVERIFY(panel.resultText().isEmpty());
    // Confirmed: the result is shown, the tab empties, the message is back in the inbox.
    panel.setConfirm([](const QString &, const QString &) { return true; });
    panel.findChild<QPushButton *>("requeueButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(
        panel.resultText(),
        QStringLiteral("Requeued 1 message(s) from 'both-svc_dlq' to the queues they came from."),
        Deadline);
    QTRY_COMPARE_WITH_TIMEOUT(window->bannerText(),
                              QStringLiteral("Requeued 1 message(s) from 'both-svc_dlq'."),
                              Deadline);
    QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 0, Deadline);
    QTRY_VERIFY_WITH_TIMEOUT(panel.statusText().startsWith("No dead letters in this queue."),
                             Deadline);
    QVERIFY(!panel.requeueAllowed()); // nothing left to requeue
    QTRY_COMPARE_WITH_TIMEOUT(queueCell(*window, Inbox, QueueTableModel::Ready), "1", Deadline);
    QTRY_COMPARE_WITH_TIMEOUT(queueCell(*window, DeadLetters, QueueTableModel::Ready), "0",
                              Deadline);
    // The original queue delivers it again, envelope byte for byte.
    QCOMPARE(owner.request("fetch " + Inbox), "Message: r-1 " + envelope("r-1"));
    QCOMPARE(owner.request("ack r-1"), "ACK_CONFIRMED r-1");
    QVERIFY(broker.terminate());
}

QTEST_MAIN(tst_DeadLetterView)
#include "tst_deadletterview.moc"
