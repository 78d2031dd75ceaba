// The queue detail's Messages tab (docs/ADMIN-GUI.md): the paging model on its own (which
// request gives which page, stale and foreign replies ignored, the filter starting again at
// page 1), then the panel in a real window against a real broker holding a large queue: pages
// of 100 follow one another in publish order without the console loading the queue, previous
// goes back, the filter narrows to one sender, and nothing of an envelope is shown.

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
#include "ui/queuedetaildialog.h"

using cmq::admingui::ConnectionOptions;
using cmq::admingui::MainWindow;
using cmq::admingui::QueueMessageModel;
using cmq::admingui::QueueMessagesPanel;
using cmq::admingui::QueueTableModel;
using cmq::test::BrokerProcess;
using cmq::test::certFile;
using cmq::test::freePort;
using cmq::test::TestClient;

namespace {

constexpr int Deadline = 60000;
constexpr int LargeQueue = 2500;

QJsonObject page(const QString &queue, qint64 after, qint64 firstId, int rows, bool more,
                 const QString &filter = {})
{
    QJsonArray messages;
    for (int i = 0; i < rows; ++i) {
        messages.append(QJsonObject{{"id", firstId + i},
                                    {"message_id", QStringLiteral("m-%1").arg(firstId + i)},
                                    {"sender", "sender_1"},
                                    {"routing_key", queue},
                                    {"size", 200},
                                    {"age_ms", 1500},
                                    {"redelivered", false},
                                    {"delivery_count", 0}});
    }
    return QJsonObject{{"queue", queue},
                       {"after_id", after},
                       {"filter", filter},
                       {"messages", messages},
                       {"more", more},
                       {"next_after_id", more ? QJsonValue(firstId + rows - 1) : QJsonValue()}};
}

QString cell(const QueueMessageModel &model, int row, int column)
{
    return model.index(row, column).data().toString();
}

QByteArray envelope(const QByteArray &id)
{
    return R"({"message_id":")" + id +
           R"(","receiver_client_id":"receiver_1","enc_session_key":"ZQ==","nonce":"bg==",)"
           R"("ciphertext":"c2VjcmV0"})";
}

} // namespace

class tst_QueueMessages : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void modelPages();
    void modelIgnoresStaleAndForeignReplies();
    void modelFilterStartsAgain();
    void largeQueuePagesInTheWindow();
};

void tst_QueueMessages::modelPages()
{
    QueueMessageModel model;
    model.setQueue("q");
    model.setPageRows(3);
    QCOMPARE(model.firstPageRequest(), QStringLiteral("queue_messages q 0 3"));
    QVERIFY(model.applyPage(page("q", 0, 1, 3, true)));
    QCOMPARE(model.pageNumber(), 1);
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(cell(model, 0, QueueMessageModel::MessageId), QStringLiteral("m-1"));
    QCOMPARE(cell(model, 0, QueueMessageModel::Sender), QStringLiteral("sender_1"));
    QCOMPARE(model.index(0, QueueMessageModel::Age).data(QueueMessageModel::SortRole).toDouble(),
             1.5);
    QCOMPARE(cell(model, 0, QueueMessageModel::Redelivered), QStringLiteral("no"));
    QVERIFY(model.hasNextPage());
    QVERIFY(!model.hasPreviousPage());
    QCOMPARE(model.previousPageRequest(), QString());

    QCOMPARE(model.nextPageRequest(), QStringLiteral("queue_messages q 3 3"));
    QVERIFY(model.applyPage(page("q", 3, 4, 3, true)));
    QCOMPARE(model.nextPageRequest(), QStringLiteral("queue_messages q 6 3"));
    QVERIFY(model.applyPage(page("q", 6, 7, 1, false)));
    QCOMPARE(model.pageNumber(), 3);
    QVERIFY(!model.hasNextPage());
    QCOMPARE(model.nextPageRequest(), QString());
    QCOMPARE(model.reloadRequest(), QStringLiteral("queue_messages q 6 3"));
    QVERIFY(model.applyPage(page("q", 6, 7, 1, false))); // a reload stays on page 3
    QCOMPARE(model.pageNumber(), 3);

    QCOMPARE(model.previousPageRequest(), QStringLiteral("queue_messages q 3 3"));
    QVERIFY(model.applyPage(page("q", 3, 4, 3, true)));
    QCOMPARE(model.pageNumber(), 2);
    QCOMPARE(cell(model, 0, QueueMessageModel::MessageId), QStringLiteral("m-4"));
    QCOMPARE(model.previousPageRequest(), QStringLiteral("queue_messages q 0 3"));
    QVERIFY(model.applyPage(page("q", 0, 1, 3, true)));
    QCOMPARE(model.pageNumber(), 1);
    QVERIFY(!model.hasPreviousPage());
}

void tst_QueueMessages::modelIgnoresStaleAndForeignReplies()
{
    QueueMessageModel model;
    model.setQueue("q");
    model.firstPageRequest();
    QVERIFY(!model.applyPage(page("other", 0, 1, 2, false)));
    QVERIFY(!model.applyPage(page("q", 40, 41, 2, false))); // not what was asked for
    QCOMPARE(model.rowCount(), 0);
    QVERIFY(model.applyPage(page("q", 0, 1, 2, false)));
    QCOMPARE(model.rowCount(), 2);
}

void tst_QueueMessages::modelFilterStartsAgain()
{
    QueueMessageModel model;
    model.setQueue("q");
    model.setPageRows(2);
    model.firstPageRequest();
    QVERIFY(model.applyPage(page("q", 0, 1, 2, true)));
    model.nextPageRequest();
    QVERIFY(model.applyPage(page("q", 2, 3, 2, true)));
    model.setFilter("  sender_1 ignored-word");
    QCOMPARE(model.filter(), QStringLiteral("sender_1"));
    QCOMPARE(model.firstPageRequest(), QStringLiteral("queue_messages q 0 2 sender_1"));
    QVERIFY(!model.applyPage(page("q", 0, 1, 2, true))); // the unfiltered reply
    QVERIFY(model.applyPage(page("q", 0, 1, 2, true, "sender_1")));
    QCOMPARE(model.pageNumber(), 1);
}

void tst_QueueMessages::largeQueuePagesInTheWindow()
{
    QCoreApplication::setOrganizationName("CipherMQ-tests");
    QStandardPaths::setTestModeEnabled(true);
    BrokerProcess broker;
    const quint16 adminPort = freePort();
    broker.set("admin.enabled", "true");
    broker.set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(adminPort));
    QVERIFY2(broker.start(), broker.output().constData());
    TestClient receiver("receiver_1");
    QVERIFY(receiver.connectTo(broker.port()));
    QCOMPARE(receiver.request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(receiver.request("declare_queue receiver_1_large"), "Queue declared");
    QCOMPARE(receiver.request("bind receiver_1_large CipherMQ_exchange receiver_1_large"),
             "Queue bound");
    QCOMPARE(receiver.request("bind receiver_1_large CipherMQ_exchange receiver_1_side"),
             "Queue bound");
    // Batches of 100 from sender_1, and a few single messages with another key from another
    // sender in between.
    TestClient sender("sender_1");
    TestClient publisher("publisher-svc-1");
    QVERIFY(sender.connectTo(broker.port()));
    QVERIFY(publisher.connectTo(broker.port()));
    for (int batch = 0; batch < LargeQueue / 100; ++batch) {
        QByteArray array = "[";
        for (int i = 0; i < 100; ++i)
            array += (i ? "," : "") + envelope("m-" + QByteArray::number(batch * 100 + i));
        sender.send("publish_batch CipherMQ_exchange receiver_1_large " + array + "]");
        const QList<QByteArray> acks = sender.readLines(100, Deadline);
        QCOMPARE(acks.size(), 100);
        QVERIFY2(acks.last() == "ACK m-" + QByteArray::number(batch * 100 + 99),
                 acks.last().constData());
        if (batch % 5 == 0) {
            const QByteArray id = "side-" + QByteArray::number(batch);
            QCOMPARE(publisher.request("publish CipherMQ_exchange receiver_1_side " + envelope(id)),
                     "ACK " + id);
        }
    }
    const int total = LargeQueue + LargeQueue / 500;

    MainWindow window;
    window.session().setWatchIntervalMs(500);
    window.resize(1280, 800);
    window.show();
    ConnectionOptions o;
    o.host = "localhost";
    o.port = adminPort;
    o.caPath = certFile("ca.crt");
    o.certPath = certFile("ops-admin.crt");
    o.keyPath = certFile("ops-admin.key");
    window.connectTo(o);
    QTRY_COMPARE_WITH_TIMEOUT(
        [&] {
            const int row = window.queueModel().rowOf("receiver_1_large");
            return row < 0
                       ? QString()
                       : window.queueModel().index(row, QueueTableModel::Ready).data().toString();
        }(),
        QString::number(total), Deadline);

    cmq::admingui::QueueDetailDialog *detail = window.openQueueDetail("receiver_1_large");
    detail->showMessagesTab();
    QueueMessagesPanel &panel = detail->messages();
    const QueueMessageModel &model = panel.model();
    QTRY_COMPARE_WITH_TIMEOUT(model.pageNumber(), 1, Deadline);
    QCOMPARE(model.rowCount(), QueueMessageModel::PageRows);
    QCOMPARE(cell(model, 0, QueueMessageModel::MessageId), QStringLiteral("m-0"));
    QVERIFY(model.hasNextPage());
    QVERIFY(panel.statusText().startsWith("Page 1 (more after)"));
    QStringList seen;
    for (int r = 0; r < model.rowCount(); ++r)
        seen << cell(model, r, QueueMessageModel::MessageId);
    // Page through all of it: every message once, in publish order.
    while (model.hasNextPage()) {
        const int before = model.pageNumber();
        panel.showNextPage();
        QTRY_COMPARE_WITH_TIMEOUT(model.pageNumber(), before + 1, Deadline);
        for (int r = 0; r < model.rowCount(); ++r)
            seen << cell(model, r, QueueMessageModel::MessageId);
    }
    QCOMPARE(seen.size(), total);
    QCOMPARE(seen.first(), QStringLiteral("m-0"));
    QCOMPARE(seen.last(), QStringLiteral("m-%1").arg(LargeQueue - 1));
    QCOMPARE(QSet<QString>(seen.begin(), seen.end()).size(), total);
    const int last = model.pageNumber();
    QCOMPARE(last, (total + QueueMessageModel::PageRows - 1) / QueueMessageModel::PageRows);
    panel.showPreviousPage();
    QTRY_COMPARE_WITH_TIMEOUT(model.pageNumber(), last - 1, Deadline);

    panel.setFilter("publisher-svc");
    QTRY_COMPARE_WITH_TIMEOUT(model.filter().isEmpty() ? -1 : model.pageNumber(), 1, Deadline);
    QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), LargeQueue / 500, Deadline);
    for (int r = 0; r < model.rowCount(); ++r) {
        QCOMPARE(cell(model, r, QueueMessageModel::Sender), QStringLiteral("publisher-svc-1"));
        QCOMPARE(cell(model, r, QueueMessageModel::RoutingKey), QStringLiteral("receiver_1_side"));
    }
    QVERIFY(!model.hasNextPage());
    // Metadata only: no column holds anything of the envelope.
    for (int r = 0; r < model.rowCount(); ++r) {
        for (int c = 0; c < model.columnCount(); ++c)
            QVERIFY(!cell(model, r, c).contains("c2VjcmV0"));
    }
    QCOMPARE(model.index(0, QueueMessageModel::Size).data(QueueMessageModel::SortRole).toInt(),
             envelope("side-0").size());

    // The headless export carries the queue's first 1000 rows of metadata.
    QTemporaryDir dir;
    const QString file = dir.filePath("export.json");
    QProcess exporter;
    exporter.start(QStringLiteral(CMQ_ADMIN_BIN),
                   {"--host", "localhost", "--port", QString::number(adminPort), "--ca",
                    certFile("ca.crt"), "--cert", certFile("ops-admin.crt"), "--key",
                    certFile("ops-admin.key"), "--export", file, "--queue", "receiver_1_large"});
    QVERIFY(exporter.waitForFinished(Deadline));
    QVERIFY2(exporter.exitCode() == 0, exporter.readAllStandardError().constData());
    QFile exported(file);
    QVERIFY(exported.open(QIODevice::ReadOnly));
    const QByteArray bytes = exported.readAll();
    QVERIFY(!bytes.contains("c2VjcmV0"));
    const QJsonObject listing =
        QJsonDocument::fromJson(bytes).object().value("queue_messages").toObject();
    QCOMPARE(listing.value("queue").toString(), QStringLiteral("receiver_1_large"));
    QCOMPARE(listing.value("messages").toArray().size(), 1000);
    QCOMPARE(listing.value("more").toBool(), true);
    QCOMPARE(listing.value("messages")[0]["message_id"].toString(), QStringLiteral("m-0"));
    QVERIFY(broker.terminate());
}

QTEST_MAIN(tst_QueueMessages)
#include "tst_queuemessages.moc"
