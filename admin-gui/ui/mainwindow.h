#pragma once
// The console's window: Overview, Queues, Exchanges, Connections, Rate limits and Audit tabs
// fed by one AdminSession's watch stream (the Audit tab by `audit` when the trail moves), per-queue
// detail windows, the admin actions behind confirmations, export, and a status bar with the
// connection state, the admin identity (CN) and node, broker version and uptime. Saved profiles
// open one window per broker, side by side; tab shortcuts, filter and refresh keys; column, sort
// and window layout remembered.

#include <functional>
#include <memory>

#include <QHash>
#include <QLabel>
#include <QMainWindow>
#include <QPointer>
#include <QTabWidget>
#include <QTreeView>

#include "models/adminsession.h"
#include "models/audittablemodel.h"
#include "models/brokeralarms.h"
#include "models/bulkaction.h"
#include "models/connectionprofiles.h"
#include "models/connectiontablemodel.h"
#include "models/exchangetreemodel.h"
#include "models/listpager.h"
#include "models/queuedepthhistory.h"
#include "models/queuetablemodel.h"
#include "models/ratelimittablemodel.h"
#include "models/snapshotexport.h"

namespace cmq::admingui {

class ConnectDialog;
class OverviewPage;
class QueueDetailDialog;
class TablePage;
class TalkersPage;

class MainWindow final : public QMainWindow
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MainWindow)

public:
    // Asked before a destructive action; true = go ahead. Tests replace the dialog.
    using Confirm = std::function<bool(const QString &title, const QString &text)>;
    enum Tab {
        OverviewTab,
        QueuesTab,
        ExchangesTab,
        ConnectionsTab,
        RateLimitsTab,
        AuditTab,
        TalkersTab
    };

    explicit MainWindow(QWidget *parent = nullptr);

    void setConfirm(Confirm confirm) { m_confirm = std::move(confirm); }
    void connectTo(const ConnectionOptions &options);
    // Connects this window to the profile's first broker and opens one more window per other
    // broker (closed with their own close box); returns those extra windows.
    QList<MainWindow *> openProfile(const ConnectionProfile &profile);
    // Adds the connected broker to the saved profile `name` (created when missing).
    bool addCurrentBrokerToProfile(QSettings &settings, const QString &name);
    // "overview", "queues", "exchanges", "connections", "ratelimits", "audit" or "talkers";
    // false when unknown.
    bool selectTab(const QString &name);
    // The snapshot sections the watch asks for while `tab` is shown (mainwindowpaging.cpp):
    // every list but the rate-limit buckets, which only their tab reads.
    static admin::Sections sectionsFor(int tab);

    AdminSession &session() { return m_session; }
    QTabWidget *tabs() { return m_tabs; }
    QueueTableModel &queueModel() { return m_queues; }
    ConnectionTableModel &connectionModel() { return m_connections; }
    RateLimitTableModel &rateLimitModel() { return m_rateLimits; }
    ExchangeTreeModel &exchangeModel() { return m_exchanges; }
    AuditTableModel &auditModel() { return m_audit; }
    TablePage *auditPage() { return m_auditPage; }
    // Why actions are greyed (a read-only identity), empty while they are allowed.
    QString actionsRefusal() const { return m_actionsRefusal; }
    TablePage *queuesPage() { return m_queuesPage; }
    TablePage *connectionsPage() { return m_connectionsPage; }
    TablePage *rateLimitsPage() { return m_rateLimitsPage; }
    ListPager *queuePager() { return m_queuePager; }
    ListPager *connectionPager() { return m_connectionPager; }
    ListPager *rateLimitPager() { return m_rateLimitPager; }
    ListPager *talkerPager() { return m_talkerPager; }
    OverviewPage *overviewPage() { return m_overview; }
    TalkersPage *talkersPage() { return m_talkersPage; }
    // mainwindowtalkers.cpp: the Connections tab with this connection selected (a queue's
    // consumer clicked in its detail window); false when the connection is not listed.
    bool showConnection(quint64 connectionId);
    // The Queues tab with the queues the selected connection consumes selected; returns them.
    QStringList showQueuesOfSelectedConnection();
    const QueueDepthHistory &depthHistory() const { return m_depthHistory; }
    ConnectDialog *connectDialog() const;
    QueueDetailDialog *queueDetail(const QString &queue) const;
    // The visible banner text: refusals and action results, for the operator and for tests.
    QString bannerText() const { return m_banner->text(); }
    // The alarm banner: the broker's alarms and certificates expiring soon, one per line;
    // empty when there is nothing to warn about.
    QString alarmText() const { return m_alarms->isVisible() ? m_alarms->text() : QString(); }
    QString statusText() const { return m_state->text(); }
    // "Admin <CN> · <host>:<port>": the identity from the certificate itself, and the node.
    QString identityText() const { return m_identity->text(); }
    QString profileName() const { return m_profileName; }
    // The node's high-availability role as the status bar shows it (empty without one).
    QString roleText() const { return m_role->text(); }

    // F5: a fresh snapshot now (or an immediate retry while reconnecting).
    void refresh();
    // Ctrl+F: the filter of the current tab, when it has one.
    void focusFilter();
    // Column widths and sort order of every table, the window's geometry and state.
    void saveLayout(QSettings &settings) const;
    void restoreLayout(QSettings &settings);
    // The About box's text: CipherMQ, Qt and OpenSSL versions.
    static QString aboutText();
    int snapshotCount() const { return m_snapshotCount; }

    // The buttons and menu entries call these; public so tests drive the same code path.
    void purgeSelectedQueue();
    void deleteSelectedQueue();
    void disconnectSelectedConnection();
    Status exportTo(const QString &path, ExportFormat format);
    // Selects these rows of the current tab's table as soon as a snapshot lists them all
    // (--select, for scripts and the screenshots).
    void selectWhenListed(const QStringList &keys);
    // The running or last bulk action (several rows selected), null before the first.
    const BulkAction *bulkAction() const { return m_bulk; }
    // Non-modal, so the window stays live; `error` is shown in it (a refusal to fix).
    void showConnectDialog(const QString &error = {});
    // Opens (or raises) a queue's detail window; it fills in as soon as the queue is known.
    QueueDetailDialog *openQueueDetail(const QString &queue);
    void openSelectedQueueDetail();
    // One watch snapshot into every model and view (the session's snapshots arrive here).
    void showSnapshot(const QJsonObject &snapshot);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void buildMenus();
    // mainwindowqueues.cpp: the lag trend and the depth sparkline of the Queues tab.
    void addQueueTrendColumns();
    // mainwindowpaging.cpp: server-side pages of the Queues, Connections, Rate limits and
    // Talkers tabs.
    void addPaging();
    // The list sizes (or pages) of a snapshot into the pagers; may ask for another page.
    void followPages(const QJsonObject &snapshot);
    // The watch's sections for what the shown tab needs; the Talkers tab catches up.
    void followTab();
    void fillProfilesMenu(QMenu *menu);
    void addToProfileInteractively();
    void updateQueueDetail(QueueDetailDialog *detail, const QJsonObject &snapshot);
    // Ends a connect started from the dialog; true when the state change is fully handled.
    bool finishDialogConnect(AdminSession::State state);
    void onStateChanged(AdminSession::State state, const QString &message);
    void onActionFinished(const QString &line, bool ok, const QString &message);
    void showAlarms(const QList<BrokerAlarm> &alarms);
    // The snapshot's "session" and "audit" (mainwindowaudit.cpp): greys the actions of a
    // read-only identity, fetches the audit trail when it moved.
    void followSession(const QJsonObject &snapshot);
    // mainwindowcluster.cpp: shows the node's role; a profile's first window that finds its
    // node standing by moves on to the profile's next node, until it finds the active one.
    void followCluster(const QJsonObject &snapshot);
    // The following window's node went away (killed, host down): try the profile's next one.
    void followPastUnreachable();
    void followTo(const ConnectionOptions &next, const QString &why, int delayMs);
    void showBanner(const QString &text, bool error);
    // mainwindowtalkers.cpp: the Talkers tab, and the links between consumers and connections.
    void addTalkersTab();
    void showTalkers(const QJsonObject &snapshot);
    // mainwindowbulk.cpp: Ctrl+Shift+P purges, Delete deletes / disconnects the selected rows.
    void addActionShortcuts();
    // mainwindowbulk.cpp: one confirmation for every selected row, then one request each.
    void runBulk(const QString &title, const QString &verb, QList<BulkAction::Target> targets,
                 const QString &consequence);
    QList<BulkAction::Target> selectedQueueTargets(const QString &action, bool withUnacked) const;
    QList<BulkAction::Target> selectedConnectionTargets() const;
    void exportInteractively();

    AdminSession m_session;
    QueueTableModel m_queues;
    ConnectionTableModel m_connections;
    RateLimitTableModel m_rateLimits;
    ExchangeTreeModel m_exchanges;
    AuditTableModel m_audit;
    qint64 m_auditFetchedId = -1; // the trail's last_id when it was last fetched
    QString m_actionsRefusal;
    QueueDepthHistory m_depthHistory;
    QHash<QString, QPointer<QueueDetailDialog>> m_details;
    QPointer<ConnectDialog> m_connectDialog;
    bool m_dialogConnecting = false; // the connect dialog waits for the attempt's outcome
    QTabWidget *m_tabs;
    QLabel *m_banner;
    QLabel *m_alarms;
    OverviewPage *m_overview;
    TablePage *m_queuesPage;
    TablePage *m_connectionsPage;
    TablePage *m_rateLimitsPage;
    TablePage *m_auditPage;
    TalkersPage *m_talkersPage = nullptr;
    ListPager *m_queuePager = nullptr;
    ListPager *m_connectionPager = nullptr;
    ListPager *m_rateLimitPager = nullptr;
    ListPager *m_talkerPager = nullptr;
    QTreeView *m_exchangeView;
    QLabel *m_state;
    QLabel *m_identity;
    QLabel *m_version;
    QLabel *m_uptime;
    Confirm m_confirm;
    QPointer<BulkAction> m_bulk;
    int m_snapshotCount = 0;
    QString m_profileName;
    QLabel *m_role;
    QList<ConnectionOptions> m_followNodes; // the profile's nodes, for the first window only
    qsizetype m_followIndex = 0;
    int m_standbysSeen = 0; // nodes found standing by in a row
    // Shared by a profile's windows: one of them has seen a node standing by, so the profile
    // is one high-availability deployment (not independent brokers side by side), and a lost
    // node means a takeover to follow rather than a restart to wait for.
    std::shared_ptr<bool> m_profileHasStandby;
};

} // namespace cmq::admingui
