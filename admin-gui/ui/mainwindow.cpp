#include "ui/mainwindow.h"

#include <utility>

#include <QElapsedTimer>
#include <QFileDialog>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QVBoxLayout>

#include "ui/bannerstyle.h"
#include "ui/bardelegate.h"
#include "ui/connectdialog.h"
#include "ui/overviewpage.h"
#include "ui/queuedetaildialog.h"
#include "ui/tablepage.h"

namespace cmq::admingui {

// Where the time of a snapshot update goes: QT_LOGGING_RULES="ciphermq.admin.ui.debug=true".
Q_LOGGING_CATEGORY(lcAdminUi, "ciphermq.admin.ui", QtWarningMsg)

namespace {

QString uptimeText(double seconds)
{
    const qint64 s = qint64(seconds);
    if (s >= 86400)
        return QObject::tr("%1 d %2 h").arg(s / 86400).arg(s % 86400 / 3600);
    return QStringLiteral("%1:%2:%3")
        .arg(s / 3600)
        .arg(s % 3600 / 60, 2, 10, QLatin1Char('0'))
        .arg(s % 60, 2, 10, QLatin1Char('0'));
}

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent), m_tabs(new QTabWidget), m_banner(new QLabel), m_alarms(new QLabel),
      m_overview(new OverviewPage), m_exchangeView(new QTreeView), m_state(new QLabel),
      m_identity(new QLabel), m_version(new QLabel), m_uptime(new QLabel)
{
    setWindowTitle(tr("CipherMQ Admin"));
    m_confirm = [this](const QString &title, const QString &text) {
        return QMessageBox::question(this, title, text, QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };

    m_queuesPage = new TablePage(&m_queues, tr("Filter queues (name, owner, …)"));
    connect(m_queuesPage->addButton(tr("Details…")), &QPushButton::clicked, this,
            &MainWindow::openSelectedQueueDetail);
    connect(m_queuesPage->view(), &QTableView::doubleClicked, this,
            &MainWindow::openSelectedQueueDetail);
    connect(m_queuesPage->addActionButton(tr("Purge…")), &QPushButton::clicked, this,
            &MainWindow::purgeSelectedQueue);
    connect(m_queuesPage->addActionButton(tr("Delete…")), &QPushButton::clicked, this,
            &MainWindow::deleteSelectedQueue);
    addQueueTrendColumns();
    m_connectionsPage = new TablePage(&m_connections, tr("Filter connections (CN, address, …)"));
    // A production certificate's subject and issuer are each wider than half the window; the
    // CN and the expiry say what an operator scans for, the header's menu shows the rest.
    m_connectionsPage->hideColumnsByDefault(
        {ConnectionTableModel::Subject, ConnectionTableModel::Issuer, ConnectionTableModel::Serial});
    connect(m_connectionsPage->addActionButton(tr("Disconnect…")), &QPushButton::clicked, this,
            &MainWindow::disconnectSelectedConnection);
    addActionShortcuts();
    m_rateLimitsPage = new TablePage(&m_rateLimits, tr("Filter buckets (CN or IP)"));
    auto *bars = new BarDelegate(this);
    m_rateLimitsPage->view()->setItemDelegateForColumn(RateLimitTableModel::GlobalTokens, bars);
    m_rateLimitsPage->view()->setItemDelegateForColumn(RateLimitTableModel::PublishTokens, bars);

    m_exchangeView->setModel(&m_exchanges);
    m_exchangeView->setAlternatingRowColors(true);
    m_exchangeView->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_exchangeView->header()->setStretchLastSection(false);
    m_exchangeView->header()->resizeSection(1, 120);
    m_exchangeView->header()->resizeSection(2, 160);

    m_tabs->addTab(m_overview, tr("Overview"));
    m_tabs->addTab(m_queuesPage, tr("Queues"));
    m_tabs->addTab(m_exchangeView, tr("Exchanges"));
    m_tabs->addTab(m_connectionsPage, tr("Connections"));
    m_tabs->addTab(m_rateLimitsPage, tr("Rate limits"));
    m_auditPage = new TablePage(&m_audit, tr("Filter the audit trail (admin, action, target, …)"));
    m_auditPage->view()->sortByColumn(AuditTableModel::Id, Qt::DescendingOrder);
    // Error texts and file paths are the point of this table: room for them, up to a limit.
    m_auditPage->view()->horizontalHeader()->setMaximumSectionSize(640);
    m_tabs->addTab(m_auditPage, tr("Audit"));
    addTalkersTab();
    addPaging();

    m_banner->setWordWrap(true);
    m_banner->setVisible(false);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_alarms->setWordWrap(true);
    m_alarms->setVisible(false);
    m_alarms->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *central = new QWidget;
    auto *layout = new QVBoxLayout(central);
    layout->addWidget(m_alarms);
    layout->addWidget(m_banner);
    layout->addWidget(m_tabs, 1);
    setCentralWidget(central);

    statusBar()->addWidget(m_state, 1);
    m_role = new QLabel;
    m_role->setObjectName(QStringLiteral("nodeRole"));
    statusBar()->addPermanentWidget(m_identity);
    statusBar()->addPermanentWidget(m_role);
    statusBar()->addPermanentWidget(m_version);
    statusBar()->addPermanentWidget(m_uptime);
    m_state->setText(tr("Not connected"));
    buildMenus();

    connect(&m_session, &AdminSession::snapshotReceived, this, &MainWindow::showSnapshot);
    connect(&m_session, &AdminSession::stateChanged, this, &MainWindow::onStateChanged);
    connect(&m_session, &AdminSession::actionFinished, this, &MainWindow::onActionFinished);
    connect(&m_session, &AdminSession::auditReceived, this,
            [this](const QJsonArray &entries) { m_audit.update(entries); });
    resize(1280, 760);
    QSettings settings;
    restoreLayout(settings);
}

void MainWindow::connectTo(const ConnectionOptions &options)
{
    m_banner->setVisible(false);
    m_auditFetchedId = -1;
    const QString cn = certificateCommonName(options.certPath);
    m_identity->setText(
        tr("Admin %1 · %2")
            .arg(cn.isEmpty() ? tr("(unreadable certificate)") : cn, nodeName(options)));
    setWindowTitle(m_profileName.isEmpty()
                       ? tr("CipherMQ Admin — %1").arg(nodeName(options))
                       : tr("CipherMQ Admin — %1 (%2)").arg(nodeName(options), m_profileName));
    if (m_session.open(options)) {
        QSettings settings;
        rememberConnection(settings, options);
    }
}

bool MainWindow::selectTab(const QString &name)
{
    static const QStringList names{"overview",   "queues", "exchanges", "connections",
                                   "ratelimits", "audit",  "talkers"};
    const int index = names.indexOf(name.toLower());
    if (index < 0)
        return false;
    m_tabs->setCurrentIndex(index);
    return true;
}

void MainWindow::showConnectDialog(const QString &error)
{
    if (!m_connectDialog) {
        QSettings settings;
        m_connectDialog = new ConnectDialog(recentConnections(settings), this);
        m_connectDialog->setAttribute(Qt::WA_DeleteOnClose);
        if (m_session.options().isComplete())
            m_connectDialog->setOptions(m_session.options());
        connect(m_connectDialog, &ConnectDialog::connectRequested, this,
                [this](const ConnectionOptions &options) {
                    m_dialogConnecting = true;
                    m_connectDialog->setBusy(tr("Connecting to %1…").arg(options.label()));
                    connectTo(options);
                });
        connect(m_connectDialog, &QDialog::rejected, this, [this] {
            // Cancelled while an attempt was running: the operator does not want it any more.
            if (std::exchange(m_dialogConnecting, false))
                m_session.close();
        });
    }
    if (!error.isEmpty())
        m_connectDialog->showError(error);
    m_connectDialog->open();
    m_connectDialog->raise();
}

ConnectDialog *MainWindow::connectDialog() const
{
    return m_connectDialog;
}

QueueDetailDialog *MainWindow::queueDetail(const QString &queue) const
{
    return m_details.value(queue);
}

QueueDetailDialog *MainWindow::openQueueDetail(const QString &queue)
{
    QPointer<QueueDetailDialog> &detail = m_details[queue];
    if (!detail) {
        detail = new QueueDetailDialog(queue, this);
        detail->attachSession(m_session);
        connect(detail, &QueueDetailDialog::connectionRequested, this,
                &MainWindow::showConnection);
        detail->setAttribute(Qt::WA_DeleteOnClose); // the QPointer turns null, see showSnapshot
        if (!m_session.lastSnapshot().isEmpty())
            updateQueueDetail(detail, m_session.lastSnapshot());
    }
    detail->show();
    detail->raise();
    return detail;
}

void MainWindow::openSelectedQueueDetail()
{
    const int row = m_queuesPage->selectedSourceRow();
    if (row >= 0)
        openQueueDetail(m_queues.rowObject(row).value("name").toString());
}

void MainWindow::updateQueueDetail(QueueDetailDialog *detail, const QJsonObject &snapshot)
{
    const QString name = detail->queueName();
    QJsonObject queue = m_queues.rowObject(m_queues.rowOf(name));
    if (queue.isEmpty() && m_queuePager->isPaged())
        return; // on another page of the broker's list, not gone: keep what it showed
    if (!queue.isEmpty()) {
        queue.insert("publish_rate", m_queues.publishRate(name));
        queue.insert("deliver_rate", m_queues.deliverRate(name));
    }
    detail->showQueue(queue, snapshot.value("bindings").toArray(),
                      snapshot.value("connections").toArray(), m_depthHistory.samples(name));
}

void MainWindow::showSnapshot(const QJsonObject &snapshot)
{
    ++m_snapshotCount;
    QElapsedTimer timer;
    timer.start();
    QList<qint64> splits; // µs per step, for the debug line below
    const auto split = [&] { splits.append(timer.nsecsElapsed() / 1000); };
    const QJsonObject broker = snapshot.value("broker").toObject();
    m_version->setText(tr("Broker %1").arg(broker.value("version").toString()));
    m_uptime->setText(tr("Up %1").arg(uptimeText(broker.value("uptime_seconds").toDouble())));
    m_overview->showSnapshot(snapshot);
    showAlarms(brokerAlarms(snapshot, m_session.client().peerCertificateChain(),
                            QDateTime::currentDateTimeUtc()));
    split();
    const QJsonArray queues = snapshot.value("queues").toArray();
    const double uptime = broker.value("uptime_seconds").toDouble();
    m_depthHistory.addSnapshot(queues, uptime); // first: the queue table's lag trend reads it
    split();
    m_queues.updateQueues(queues, uptime);
    m_queuesPage->view()->viewport()->update(); // sparklines move on even where rows did not
    split();
    m_connections.update(snapshot.value("connections").toArray());
    followPages(snapshot);
    split();
    // Watched only while their tab is shown (sectionsFor): without them the tab keeps its rows
    // until the snapshot its opening asks for arrives.
    if (snapshot.contains("ratelimits"))
        m_rateLimits.updateBuckets(snapshot.value("ratelimits").toObject());
    showTalkers(snapshot);
    split();
    followSession(snapshot);
    followCluster(snapshot);
    split();
    if (m_exchanges.updateTopology(snapshot.value("exchanges").toArray(),
                                   snapshot.value("bindings").toArray()))
        m_exchangeView->expandAll();
    split();
    m_details.removeIf([](const auto &entry) { return entry.value().isNull(); });
    for (QueueDetailDialog *detail : std::as_const(m_details))
        updateQueueDetail(detail, snapshot);
    split();
    qCDebug(lcAdminUi) << "snapshot" << snapshot.value("sequence").toInteger()
                       << "µs (cumulative): overview/history/queues/connections/ratelimits+talkers/"
                          "session/exchanges/details"
                       << splits;
}

bool MainWindow::finishDialogConnect(AdminSession::State state)
{
    if (!m_dialogConnecting || !m_connectDialog)
        return false;
    switch (state) {
    case AdminSession::State::Connected:
        m_dialogConnecting = false;
        m_connectDialog->done(QDialog::Accepted);
        return false;
    case AdminSession::State::Refused: // shown in the dialog by onStateChanged
        m_dialogConnecting = false;
        return false;
    case AdminSession::State::Reconnecting: {
        // From the dialog the operator retries by hand, after fixing host or port.
        m_dialogConnecting = false;
        const QString error = m_session.errorText();
        m_session.close();
        m_connectDialog->showError(error);
        m_state->setText(error);
        showBanner(error, true);
        return true;
    }
    default:
        return false;
    }
}

void MainWindow::onStateChanged(AdminSession::State state, const QString &message)
{
    if (finishDialogConnect(state))
        return;
    m_state->setText(message);
    switch (state) {
    case AdminSession::State::Connected:
        m_banner->setVisible(false);
        break;
    case AdminSession::State::Refused:
        // Retrying cannot help: offer the connect dialog to pick another identity or CA.
        showBanner(message, true);
        showConnectDialog(message);
        break;
    case AdminSession::State::Reconnecting:
        // The tables keep their last content: an operator watching a restart keeps context.
        showBanner(message, true);
        followPastUnreachable();
        break;
    default:
        break;
    }
}

void MainWindow::showAlarms(const QList<BrokerAlarm> &alarms)
{
    if (alarms.isEmpty()) {
        m_alarms->setVisible(false);
        return;
    }
    QStringList lines;
    for (const BrokerAlarm &alarm : alarms)
        lines.append(alarm.text);
    const QString text = lines.join(u'\n');
    if (m_alarms->isVisible() && m_alarms->text() == text)
        return; // restyling on every snapshot would cost a re-polish each second
    m_alarms->setText(text);
    m_alarms->setStyleSheet(alarms.first().severity == BrokerAlarm::Severity::Critical
                                ? errorBannerStyle()
                                : warningBannerStyle());
    m_alarms->setVisible(true);
}

void MainWindow::showBanner(const QString &text, bool error)
{
    m_banner->setText(text);
    m_banner->setStyleSheet(error ? errorBannerStyle() : okBannerStyle());
    m_banner->setVisible(true);
}

void MainWindow::purgeSelectedQueue()
{
    if (m_queuesPage->selectedSourceRows().size() > 1)
        return runBulk(tr("Purge queues"), tr("Purge"), selectedQueueTargets("purge", false),
                       tr("Their ready messages will be deleted permanently. Unacknowledged "
                          "deliveries stay with their consumers."));
    const int row = m_queuesPage->selectedSourceRow();
    if (row < 0)
        return;
    const QJsonObject queue = m_queues.rowObject(row);
    const QString name = queue.value("name").toString();
    const qint64 ready = queue.value("ready").toInteger();
    if (!m_confirm(tr("Purge queue"),
                   tr("Purge queue '%1'? Its %2 ready message(s) will be deleted permanently. "
                      "Unacknowledged deliveries stay with their consumers.")
                       .arg(name)
                       .arg(ready)))
        return;
    m_session.runAction(QStringLiteral("purge %1").arg(name));
}

void MainWindow::deleteSelectedQueue()
{
    if (m_queuesPage->selectedSourceRows().size() > 1)
        return runBulk(tr("Delete queues"), tr("Delete"),
                       selectedQueueTargets("delete_queue", true),
                       tr("The queues go with their bindings and every message; their consumers "
                          "are cancelled. This cannot be undone."));
    const int row = m_queuesPage->selectedSourceRow();
    if (row < 0)
        return;
    const QJsonObject queue = m_queues.rowObject(row);
    const QString name = queue.value("name").toString();
    const qint64 messages = queue.value("ready").toInteger() + queue.value("unacked").toInteger();
    if (!m_confirm(tr("Delete queue"),
                   tr("Delete queue '%1' with its bindings and all %2 message(s)? Its consumers "
                      "are cancelled. This cannot be undone.")
                       .arg(name)
                       .arg(messages)))
        return;
    m_session.runAction(QStringLiteral("delete_queue %1").arg(name));
}

void MainWindow::disconnectSelectedConnection()
{
    if (m_connectionsPage->selectedSourceRows().size() > 1)
        return runBulk(tr("Disconnect clients"), tr("Disconnect"), selectedConnectionTargets(),
                       tr("Their unacknowledged deliveries go back to their queues."));
    const int row = m_connectionsPage->selectedSourceRow();
    if (row < 0)
        return;
    const QJsonObject connection = m_connections.rowObject(row);
    const qint64 id = connection.value("id").toInteger();
    if (!m_confirm(
            tr("Disconnect client"),
            tr("Disconnect connection %1 (CN '%2' from %3)? Its unacknowledged deliveries "
               "go back to their queues.")
                .arg(id)
                .arg(connection.value("cn").toString(), connection.value("address").toString())))
        return;
    m_session.runAction(QStringLiteral("disconnect %1").arg(id));
}

void MainWindow::onActionFinished(const QString &line, bool ok, const QString &message)
{
    m_session.fetchAudit(AuditTableModel::FetchCount); // the action is on the trail by now
    if (m_bulk && m_bulk->isRunning())
        return; // the bulk action shows its progress and its summary
    if (!ok) {
        showBanner(tr("'%1' failed: %2").arg(line, message), true);
        return;
    }
    const QJsonObject reply = QJsonDocument::fromJson(message.toUtf8()).object();
    const QString action = reply.value("action").toString();
    if (action == "purge")
        showBanner(tr("Purged %1 message(s) from '%2'.")
                       .arg(reply.value("purged").toInteger())
                       .arg(reply.value("queue").toString()),
                   false);
    else if (action == "delete_queue")
        showBanner(tr("Deleted queue '%1' (%2 message(s) dropped).")
                       .arg(reply.value("queue").toString())
                       .arg(reply.value("messages_dropped").toInteger()),
                   false);
    else if (action == "requeue")
        showBanner(tr("Requeued %1 message(s) from '%2'.")
                       .arg(reply.value("requeued").toInteger())
                       .arg(reply.value("queue").toString()),
                   false);
    else
        showBanner(tr("Disconnected connection %1 (%2).")
                       .arg(reply.value("connection_id").toInteger())
                       .arg(reply.value("cn").toString()),
                   false);
}

Status MainWindow::exportTo(const QString &path, ExportFormat format)
{
    if (m_session.state() != AdminSession::State::Connected)
        return failure(tr("Not connected to a broker"));
    return exportSnapshot(m_session.client(), path, format);
}

void MainWindow::exportInteractively()
{
    QString selected;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export metrics snapshot"), QStringLiteral("ciphermq-snapshot.json"),
        tr("JSON snapshot (*.json);;Prometheus text (*.prom);;CSV queues and connections (*.csv)"),
        &selected);
    if (path.isEmpty())
        return;
    const ExportFormat format = selected.contains("*.prom")  ? ExportFormat::Prometheus
                                : selected.contains("*.csv") ? ExportFormat::Csv
                                                             : formatForFileName(path);
    const Status status = exportTo(path, format);
    if (status)
        showBanner(tr("Exported to %1").arg(path), false);
    else
        showBanner(tr("Export failed: %1").arg(status.error()), true);
}

} // namespace cmq::admingui
