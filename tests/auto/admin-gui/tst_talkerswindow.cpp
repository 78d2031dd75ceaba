// The Talkers tab and the consumer/connection links in the real window, against a real broker
// with traffic from two identities: sender_1 publishes five messages for each one of svc-a's,
// and the table (sorted by publish/s) and the chart put sender_1 first. From a queue's
// consumer, one click reaches its connection on the Connections tab; from there one click
// reaches the queues it consumes. Paged (from 2,000 identities on; here from 1), the tab asks
// the broker for the busiest by its own publish rate and shows the broker's rates; the filter
// goes to the broker, and the hidden tab's watch asks for the page only.

#include <QJsonArray>
#include <QJsonObject>
#include <QtTest>

#include "adminfixture.h"
#include "models/listpager.h"
#include "testclient.h"
#include "ui/mainwindow.h"
#include "ui/queuedetaildialog.h"
#include "ui/tablepage.h"
#include "ui/talkerspage.h"

using cmq::admingui::JsonTableModel;
using cmq::admingui::MainWindow;
using cmq::admingui::TalkerTableModel;
using cmq::test::BrokerProcess;
using cmq::test::TestClient;

namespace {

constexpr int Deadline = cmq::test::GuiDeadline;
const QByteArray Queue = "receiver_1_talkers";

} // namespace

class tst_TalkersWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void heavierPublisherFirst();
    void consumerToConnectionAndBack();
    void pagedByTheBrokersRates();

private:
    void publishRound();

    BrokerProcess m_broker;
    quint16 m_adminPort = 0;
    std::unique_ptr<TestClient> m_receiver;
    std::unique_ptr<TestClient> m_heavy;
    std::unique_ptr<TestClient> m_light;
    std::unique_ptr<MainWindow> m_window;
    int m_sent = 0;
};

void tst_TalkersWindow::initTestCase()
{
    cmq::test::isolateSettings();
    m_adminPort = cmq::test::enableAdmin(m_broker);
    QVERIFY2(m_broker.start(), m_broker.output().constData());
    m_receiver = std::make_unique<TestClient>("receiver_1");
    m_heavy = std::make_unique<TestClient>("sender_1");
    m_light = std::make_unique<TestClient>("svc-a");
    QVERIFY(m_receiver->connectTo(m_broker.port()));
    QVERIFY(m_heavy->connectTo(m_broker.port()));
    QVERIFY(m_light->connectTo(m_broker.port()));
    QCOMPARE(m_receiver->request("declare_exchange CipherMQ_exchange"), "Exchange declared");
    QCOMPARE(m_receiver->request("declare_queue " + Queue), "Queue declared");
    QCOMPARE(m_receiver->request("bind " + Queue + " CipherMQ_exchange " + Queue), "Queue bound");
    QCOMPARE(m_receiver->request("consume " + Queue), "Subscribed to queue");

    m_window = cmq::test::openAdminWindow(m_adminPort);
}

void tst_TalkersWindow::cleanupTestCase()
{
    m_window.reset();
    m_receiver.reset();
    m_heavy.reset();
    m_light.reset();
    QVERIFY(m_broker.terminate());
}

void tst_TalkersWindow::publishRound()
{
    const auto publish = [this](TestClient &client) {
        const QByteArray id = "talk-" + QByteArray::number(++m_sent);
        QCOMPARE(client.request("publish CipherMQ_exchange " + Queue + ' ' +
                                cmq::test::envelope(id)),
                 "ACK " + id);
    };
    for (int i = 0; i < 5; ++i)
        publish(*m_heavy);
    publish(*m_light);
}

void tst_TalkersWindow::heavierPublisherFirst()
{
    QVERIFY(m_window->selectTab("talkers"));
    QCOMPARE(m_window->tabs()->currentIndex(), int(MainWindow::TalkersTab));
    TalkerTableModel &model = m_window->talkersPage()->model();
    QSortFilterProxyModel *table = m_window->talkersPage()->table()->proxy();
    // Traffic goes on while the window is watched: a round per check, until both identities
    // have a rate and the table shows the heavier one on top.
    const auto firstRow = [&] {
        publishRound();
        return table->rowCount() >= 2 ? table->index(0, TalkerTableModel::Cn).data().toString()
                                      : QString();
    };
    QTRY_VERIFY_WITH_TIMEOUT(firstRow() == "sender_1" && model.publishRate("svc-a") > 0, Deadline);
    QVERIFY(model.publishRate("sender_1") > 2 * model.publishRate("svc-a"));
    // receiver_1 consumes everything: its deliveries are counted too.
    QTRY_VERIFY_WITH_TIMEOUT(model.deliverRate("receiver_1") > 0, Deadline);
    // The table also sorts the other way round when asked.
    m_window->talkersPage()->table()->view()->sortByColumn(TalkerTableModel::PublishRate,
                                                           Qt::AscendingOrder);
    QVERIFY(table->index(table->rowCount() - 1, TalkerTableModel::Cn).data().toString() ==
            "sender_1");
    m_window->talkersPage()->table()->view()->sortByColumn(TalkerTableModel::PublishRate,
                                                           Qt::DescendingOrder);

    // The chart draws the busiest identities: sender_1 and receiver_1 (its deliveries) above
    // svc-a, which is drawn too.
    const QStringList charted = m_window->talkersPage()->chartedNames();
    QVERIFY2(charted.contains("sender_1") && charted.contains("svc-a"),
             qPrintable(charted.join(',')));
    QVERIFY(charted.indexOf("sender_1") < charted.indexOf("svc-a"));
    QVERIFY(!model.history("sender_1").isEmpty());
    // The admin's own connection is no talker.
    QCOMPARE(model.rowOf("ops-admin"), -1);
}

void tst_TalkersWindow::consumerToConnectionAndBack()
{
    auto *detail = m_window->openQueueDetail(QString::fromLatin1(Queue));
    QTRY_COMPARE_WITH_TIMEOUT(detail->consumers().rowCount(), 1, Deadline);
    const qint64 consumerId = detail->consumers().rowObject(0).value("id").toInteger();
    detail->requestConsumerConnection(0); // what clicking the consumer's row does
    QCOMPARE(m_window->tabs()->currentIndex(), int(MainWindow::ConnectionsTab));
    const int row = m_window->connectionsPage()->selectedSourceRow();
    QVERIFY(row >= 0);
    const QJsonObject connection = m_window->connectionModel().rowObject(row);
    QCOMPARE(connection.value("id").toInteger(), consumerId);
    QCOMPARE(connection.value("cn").toString(), QString("receiver_1"));

    // And back: the queues that connection consumes, selected on the Queues tab.
    QCOMPARE(m_window->showQueuesOfSelectedConnection(), QStringList{QString::fromLatin1(Queue)});
    QCOMPARE(m_window->tabs()->currentIndex(), int(MainWindow::QueuesTab));
    const int queueRow = m_window->queuesPage()->selectedSourceRow();
    QVERIFY(queueRow >= 0);
    QCOMPARE(m_window->queueModel().rowObject(queueRow).value("name").toString(),
             QString::fromLatin1(Queue));
    // A connection consuming nothing says so instead of jumping.
    QString publisherId;
    for (int r = 0; r < m_window->connectionModel().rowCount(); ++r) {
        const QJsonObject c = m_window->connectionModel().rowObject(r);
        if (c.value("cn") == QLatin1String("sender_1"))
            publisherId = QString::number(c.value("id").toInteger());
    }
    QVERIFY(m_window->connectionsPage()->selectKey(publisherId));
    QVERIFY(m_window->showQueuesOfSelectedConnection().isEmpty());
    QVERIFY2(m_window->bannerText().contains("consumes no queue"),
             qPrintable(m_window->bannerText()));
}

void tst_TalkersWindow::pagedByTheBrokersRates()
{
    MainWindow &window = *m_window;
    QVERIFY(window.selectTab("talkers"));
    window.talkerPager()->setThreshold(1);
    const auto snapshot = [&] { return window.session().lastSnapshot(); };
    const auto pageInfo = [&] { return snapshot().value("talkers_page").toObject(); };
    QTRY_VERIFY_WITH_TIMEOUT(!pageInfo().isEmpty(), Deadline);
    // The tab's order (publish/s, busiest first) is the page's.
    QVERIFY2(window.session().watchLine().contains(
                 "talkers.sort=publish_rate talkers.order=desc talkers.limit=200"),
             qPrintable(window.session().watchLine()));
    QCOMPARE(pageInfo().value("total").toInt(), 3); // receiver_1, sender_1, svc-a
    cmq::admingui::TablePage *table = window.talkersPage()->table();
    QTRY_COMPARE_WITH_TIMEOUT(table->pageSummary()->text(),
                              QStringLiteral("Rows 1–3 of 3 identities"), Deadline);

    // The broker's rates, once it has sampled the traffic twice: its first row is sender_1,
    // and the table shows the rate the broker sent, not one of its own.
    TalkerTableModel &model = window.talkersPage()->model();
    const auto brokerFirst = [&] {
        publishRound();
        const QJsonArray rows = snapshot().value("talkers").toArray();
        return rows.isEmpty() ? QJsonObject() : rows.first().toObject();
    };
    QTRY_VERIFY_WITH_TIMEOUT(brokerFirst().value("cn") == QLatin1String("sender_1") &&
                                 brokerFirst().value("publish_rate").toDouble() > 0,
                             Deadline);
    const QJsonObject first = snapshot().value("talkers").toArray().first().toObject();
    QVERIFY(model.brokerRates());
    QCOMPARE(model.publishRate("sender_1"), first.value("publish_rate").toDouble());
    QCOMPARE(model.deliverRate("sender_1"), first.value("deliver_rate").toDouble());
    QCOMPARE(table->proxy()->index(0, TalkerTableModel::Cn).data().toString(),
             QStringLiteral("sender_1"));

    // The filter goes to the broker.
    table->filter()->setText(QStringLiteral("SVC"));
    QTRY_COMPARE_WITH_TIMEOUT(window.talkerPager()->matched(), 1, Deadline);
    QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 1, Deadline);
    QCOMPARE(pageInfo().value("filter").toString(), QStringLiteral("SVC"));
    QCOMPARE(table->pageSummary()->text(), QStringLiteral("Rows 1–1 of 1 matching (3 identities)"));

    // Hidden, the tab still follows the page (its chart's history), and only the page.
    QVERIFY(window.selectTab("queues"));
    QVERIFY(window.session().watchLine().contains("talkers.filter=SVC"));
    const qint64 sequence = snapshot().value("sequence").toInteger();
    QTRY_VERIFY_WITH_TIMEOUT(snapshot().value("sequence").toInteger() > sequence, Deadline);
    QCOMPARE(pageInfo().value("filter").toString(), QStringLiteral("SVC"));
    QCOMPARE(snapshot().value("talkers").toArray().size(), 1);
    table->filter()->clear();
    QTRY_COMPARE_WITH_TIMEOUT(window.talkerPager()->matched(), 3, Deadline);
    window.talkerPager()->setThreshold(cmq::admingui::ListPager::PagingThreshold);
}

QTEST_MAIN(tst_TalkersWindow)
#include "tst_talkerswindow.moc"
