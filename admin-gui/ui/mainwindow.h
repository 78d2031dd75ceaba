#pragma once
// The console's window: Overview, Queues, Exchanges, Connections and Rate limits tabs fed by
// one AdminSession's watch stream, the admin actions behind confirmations, export, and a
// status bar with the connection state, broker version and uptime.

#include <functional>

#include <QLabel>
#include <QMainWindow>
#include <QTabWidget>
#include <QTreeView>

#include "models/adminsession.h"
#include "models/connectiontablemodel.h"
#include "models/exchangetreemodel.h"
#include "models/queuetablemodel.h"
#include "models/ratelimittablemodel.h"
#include "models/snapshotexport.h"

namespace cmq::admingui {

class OverviewPage;
class TablePage;

class MainWindow final : public QMainWindow
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MainWindow)

public:
    // Asked before a destructive action; true = go ahead. Tests replace the dialog.
    using Confirm = std::function<bool(const QString &title, const QString &text)>;
    enum Tab { OverviewTab, QueuesTab, ExchangesTab, ConnectionsTab, RateLimitsTab };

    explicit MainWindow(QWidget *parent = nullptr);

    void setConfirm(Confirm confirm) { m_confirm = std::move(confirm); }
    void connectTo(const ConnectionOptions &options);

    AdminSession &session() { return m_session; }
    QTabWidget *tabs() { return m_tabs; }
    QueueTableModel &queueModel() { return m_queues; }
    ConnectionTableModel &connectionModel() { return m_connections; }
    RateLimitTableModel &rateLimitModel() { return m_rateLimits; }
    ExchangeTreeModel &exchangeModel() { return m_exchanges; }
    TablePage *queuesPage() { return m_queuesPage; }
    TablePage *connectionsPage() { return m_connectionsPage; }
    OverviewPage *overviewPage() { return m_overview; }
    // The visible banner text: refusals and action results, for the operator and for tests.
    QString bannerText() const { return m_banner->text(); }
    QString statusText() const { return m_state->text(); }
    int snapshotCount() const { return m_snapshotCount; }

    // The buttons and menu entries call these; public so tests drive the same code path.
    void purgeSelectedQueue();
    void deleteSelectedQueue();
    void disconnectSelectedConnection();
    Status exportTo(const QString &path, ExportFormat format);
    void showConnectDialog();

private:
    void buildMenus();
    void showSnapshot(const QJsonObject &snapshot);
    void onStateChanged(AdminSession::State state, const QString &message);
    void onActionFinished(const QString &line, bool ok, const QString &message);
    void showBanner(const QString &text, bool error);
    void exportInteractively();

    AdminSession m_session;
    QueueTableModel m_queues;
    ConnectionTableModel m_connections;
    RateLimitTableModel m_rateLimits;
    ExchangeTreeModel m_exchanges;
    QTabWidget *m_tabs;
    QLabel *m_banner;
    OverviewPage *m_overview;
    TablePage *m_queuesPage;
    TablePage *m_connectionsPage;
    TablePage *m_rateLimitsPage;
    QTreeView *m_exchangeView;
    QLabel *m_state;
    QLabel *m_version;
    QLabel *m_uptime;
    Confirm m_confirm;
    int m_snapshotCount = 0;
};

} // namespace cmq::admingui
