// The parts of MainWindow an operator's habits rely on: menus and shortcuts, saved profiles
// opening several brokers side by side, the remembered layout and the About box.

#include <QCloseEvent>
#include <QHeaderView>
#include <QInputDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QSslSocket>

#include "ui/mainwindow.h"
#include "ui/tablepage.h"
#include "ui/talkerspage.h"

namespace cmq::admingui {

void MainWindow::buildMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Connect…"), QKeySequence::Open, this, [this] { showConnectDialog(); });
    QMenu *profiles = file->addMenu(tr("&Profiles"));
    connect(profiles, &QMenu::aboutToShow, this, [this, profiles] { fillProfilesMenu(profiles); });
    fillProfilesMenu(profiles); // so the menu is not empty before its first showing
    file->addAction(tr("&Export…"), QKeySequence::Save, this, &MainWindow::exportInteractively);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    for (int i = 0; i < m_tabs->count(); ++i) {
        QAction *action =
            view->addAction(m_tabs->tabText(i), this, [this, i] { m_tabs->setCurrentIndex(i); });
        action->setShortcut(QKeySequence(QStringLiteral("Ctrl+%1").arg(i + 1)));
    }
    view->addSeparator();
    view->addAction(tr("&Filter"), QKeySequence::Find, this, &MainWindow::focusFilter);
    view->addAction(tr("&Refresh"), QKeySequence::Refresh, this, &MainWindow::refresh);

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About CipherMQ Admin…"), this,
                    [this] { QMessageBox::about(this, tr("About CipherMQ Admin"), aboutText()); });
}

void MainWindow::fillProfilesMenu(QMenu *menu)
{
    menu->clear();
    QSettings settings;
    const QList<ConnectionProfile> profiles = loadProfiles(settings);
    for (const ConnectionProfile &profile : profiles) {
        const QString text =
            tr("%1 (%n broker(s))", nullptr, int(profile.nodes.size())).arg(profile.name);
        menu->addAction(text, this, [this, profile] { openProfile(profile); });
    }
    if (profiles.isEmpty())
        menu->addAction(tr("No saved profiles"))->setEnabled(false);
    menu->addSeparator();
    QAction *add = menu->addAction(tr("&Add this broker to a profile…"), this,
                                   &MainWindow::addToProfileInteractively);
    add->setEnabled(m_session.options().isComplete());
}

QList<MainWindow *> MainWindow::openProfile(const ConnectionProfile &profile)
{
    QList<MainWindow *> opened;
    if (profile.nodes.isEmpty())
        return opened;
    m_profileName = profile.name;
    m_followNodes = profile.nodes.size() > 1 ? profile.nodes : QList<ConnectionOptions>();
    m_followIndex = 0;
    m_standbysSeen = 0;
    m_profileHasStandby = std::make_shared<bool>(false);
    connectTo(profile.nodes.first());
    for (qsizetype i = 1; i < profile.nodes.size(); ++i) {
        auto *window = new MainWindow; // a top-level window of its own, side by side
        window->setAttribute(Qt::WA_DeleteOnClose);
        window->m_profileName = profile.name;
        window->m_profileHasStandby = m_profileHasStandby;
        window->setConfirm(m_confirm);
        window->session().setWatchIntervalMs(m_session.watchIntervalMs());
        window->move(pos() + QPoint(40 * int(i), 40 * int(i)));
        window->show();
        window->connectTo(profile.nodes[i]);
        opened.append(window);
    }
    return opened;
}

bool MainWindow::addCurrentBrokerToProfile(QSettings &settings, const QString &name)
{
    if (name.isEmpty() || !m_session.options().isComplete())
        return false;
    const bool added = addNodeToProfile(settings, name, m_session.options());
    m_profileName = name;
    return added;
}

void MainWindow::addToProfileInteractively()
{
    QSettings settings;
    QStringList names;
    for (const ConnectionProfile &profile : loadProfiles(settings))
        names.append(profile.name);
    bool ok = false;
    const QString name =
        QInputDialog::getItem(this, tr("Add to profile"), tr("Profile (a new name creates one):"),
                              names, 0, true, &ok)
            .trimmed();
    if (!ok || name.isEmpty())
        return;
    if (addCurrentBrokerToProfile(settings, name))
        showBanner(tr("Added %1 to profile '%2'.").arg(nodeName(m_session.options()), name), false);
    else
        showBanner(tr("Profile '%1' already lists %2.").arg(name, nodeName(m_session.options())),
                   false);
}

void MainWindow::refresh()
{
    m_auditFetchedId = -1; // the next snapshot fetches the audit trail again
    m_session.refresh();
}

void MainWindow::focusFilter()
{
    auto *page = qobject_cast<TablePage *>(m_tabs->currentWidget());
    if (m_tabs->currentWidget() == m_talkersPage)
        page = m_talkersPage->table();
    if (page) {
        page->filter()->setFocus(Qt::ShortcutFocusReason);
        page->filter()->selectAll();
    }
}

void MainWindow::saveLayout(QSettings &settings) const
{
    settings.beginGroup("layout");
    settings.setValue("geometry", saveGeometry());
    settings.setValue("state", saveState());
    settings.setValue("tab", m_tabs->currentIndex());
    settings.setValue("queues", m_queuesPage->saveHeaderState());
    settings.setValue("connections", m_connectionsPage->saveHeaderState());
    settings.setValue("ratelimits", m_rateLimitsPage->saveHeaderState());
    settings.setValue("audit", m_auditPage->saveHeaderState());
    settings.setValue("talkers", m_talkersPage->table()->saveHeaderState());
    settings.setValue("exchanges", m_exchangeView->header()->saveState());
    settings.endGroup();
}

void MainWindow::restoreLayout(QSettings &settings)
{
    settings.beginGroup("layout");
    if (settings.contains("geometry"))
        restoreGeometry(settings.value("geometry").toByteArray());
    if (settings.contains("state"))
        restoreState(settings.value("state").toByteArray());
    if (settings.contains("tab"))
        m_tabs->setCurrentIndex(settings.value("tab").toInt());
    m_queuesPage->restoreHeaderState(settings.value("queues").toByteArray());
    m_connectionsPage->restoreHeaderState(settings.value("connections").toByteArray());
    m_rateLimitsPage->restoreHeaderState(settings.value("ratelimits").toByteArray());
    m_auditPage->restoreHeaderState(settings.value("audit").toByteArray());
    m_talkersPage->table()->restoreHeaderState(settings.value("talkers").toByteArray());
    if (settings.contains("exchanges"))
        m_exchangeView->header()->restoreState(settings.value("exchanges").toByteArray());
    settings.endGroup();
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    QSettings settings;
    saveLayout(settings);
    QMainWindow::closeEvent(event);
}

QString MainWindow::aboutText()
{
    return tr("<h3>CipherMQ Admin %1</h3>"
              "<p>The desktop console of the CipherMQ message broker.</p>"
              "<p>Qt %2 (built with %3)<br>OpenSSL %4</p>")
        .arg(QStringLiteral(CIPHERMQ_VERSION), QString::fromLatin1(qVersion()),
             QStringLiteral(QT_VERSION_STR), QSslSocket::sslLibraryVersionString());
}

} // namespace cmq::admingui
