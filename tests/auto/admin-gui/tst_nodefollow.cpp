// A profile over an active/standby pair on one PostgreSQL database (docs/ADMIN-GUI.md,
// "Profiles"): a standby with its admin listener enabled starts (it failed to, loading the
// audit trail from a database it had not opened), and the profile's first window, listed
// with the standby first, moves on to the active node by itself and shows its role; listed
// with the active first, it follows the standby when the active is killed and the standby
// takes over (it used to retry the dead node for ever). Then the roles as text on their own.

#include <QJsonObject>
#include <QStandardPaths>
#include <QtTest>

#include "brokerprocess.h"
#include "testenv.h"
#include "testpostgres.h"
#include "ui/mainwindow.h"

using cmq::admingui::ConnectionOptions;
using cmq::admingui::ConnectionProfile;
using cmq::admingui::MainWindow;
using cmq::test::BrokerProcess;
using cmq::test::certFile;
using cmq::test::freePort;
using cmq::test::TestDatabase;

namespace {

constexpr int Deadline = 60000;

} // namespace

class tst_NodeFollow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Settings of the windows (profiles, layout) in a test location, not the user's.
    void initTestCase()
    {
        QCoreApplication::setOrganizationName("CipherMQ-tests");
        QStandardPaths::setTestModeEnabled(true);
    }
    void roleText();
    void firstWindowFollowsTheActive();
    void firstWindowFollowsATakeover();
    void independentBrokersStayPut();

private:
    // Two nodes of one deployment on `database`, each with its admin listener on adminPorts.
    static bool startPair(BrokerProcess &a, BrokerProcess &b, const TestDatabase &database,
                          const quint16 (&adminPorts)[2]);
};

namespace {

ConnectionOptions adminNode(quint16 port)
{
    ConnectionOptions o;
    o.host = "localhost";
    o.port = port;
    o.caPath = certFile("ca.crt");
    o.certPath = certFile("ops-admin.crt");
    o.keyPath = certFile("ops-admin.key");
    return o;
}

} // namespace

bool tst_NodeFollow::startPair(BrokerProcess &a, BrokerProcess &b, const TestDatabase &database,
                               const quint16 (&adminPorts)[2])
{
    int i = 0;
    for (BrokerProcess *node : {&a, &b}) {
        node->usePostgres(database);
        node->set("cluster.node_id", i == 0 ? "\"a\"" : "\"b\"");
        node->set("cluster.client_address", QStringLiteral("\"127.0.0.1:%1\"").arg(node->port()));
        node->set("admin.enabled", "true");
        node->set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(adminPorts[i]));
        ++i;
    }
    if (!a.start()) {
        qWarning("%s", a.output().constData());
        return false;
    }
    if (!b.start()) {
        qWarning("%s", b.output().constData());
        return false;
    }
    return true;
}

void tst_NodeFollow::roleText()
{
    using cmq::admingui::nodeRoleText;
    QCOMPARE(nodeRoleText({}), QString());
    QCOMPARE(nodeRoleText({{"role", "active"}}), QStringLiteral("active"));
    QCOMPARE(nodeRoleText({{"role", "standby"}}), QStringLiteral("standby"));
    QCOMPARE(
        nodeRoleText(
            {{"role", "standby"}, {"active_node_id", "a"}, {"active_address", "127.0.0.1:5671"}}),
        QStringLiteral("standby (active: a at 127.0.0.1:5671)"));
}

void tst_NodeFollow::firstWindowFollowsTheActive()
{
    TestDatabase database;
    QVERIFY2(database.isValid(), qPrintable(database.error()));
    BrokerProcess active, standby;
    const quint16 adminPorts[2] = {freePort(), freePort()};
    QVERIFY(startPair(active, standby, database, adminPorts));

    MainWindow window;
    window.session().setWatchIntervalMs(200);
    window.show();
    // The standby first: the first window finds it standing by and moves to the active.
    const QList<MainWindow *> others =
        window.openProfile(
            ConnectionProfile{"pair", {adminNode(adminPorts[1]), adminNode(adminPorts[0])}});
    QCOMPARE(others.size(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(window.roleText(), QStringLiteral("Role: active"), Deadline);
    QVERIFY2(window.identityText().endsWith(QStringLiteral(":%1").arg(adminPorts[0])),
             qPrintable(window.identityText()));
    // It stays with the active node.
    const int before = window.snapshotCount();
    QTRY_VERIFY_WITH_TIMEOUT(window.snapshotCount() > before + 3, Deadline);
    QCOMPARE(window.roleText(), QStringLiteral("Role: active"));
    // The profile's other window stays on its node, the profile's second: the active one too.
    QTRY_COMPARE_WITH_TIMEOUT(others[0]->roleText(), QStringLiteral("Role: active"), Deadline);
    delete others[0];
}

void tst_NodeFollow::firstWindowFollowsATakeover()
{
    TestDatabase database;
    QVERIFY2(database.isValid(), qPrintable(database.error()));
    BrokerProcess active, standby;
    const quint16 adminPorts[2] = {freePort(), freePort()};
    QVERIFY(startPair(active, standby, database, adminPorts));

    MainWindow window;
    window.session().setWatchIntervalMs(200);
    window.session().setReconnectDelayMs(300);
    window.show();
    const QList<MainWindow *> others =
        window.openProfile(
            ConnectionProfile{"pair", {adminNode(adminPorts[0]), adminNode(adminPorts[1])}});
    QCOMPARE(others.size(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(window.roleText(), QStringLiteral("Role: active"), Deadline);
    QTRY_VERIFY_WITH_TIMEOUT(others[0]->roleText().startsWith(QStringLiteral("Role: standby (active: a")),
                             Deadline);

    active.kill(); // kill -9: its lock goes with its database session, the standby takes over
    QTRY_VERIFY_WITH_TIMEOUT(window.identityText().endsWith(QStringLiteral(":%1").arg(adminPorts[1])),
                             Deadline);
    QTRY_COMPARE_WITH_TIMEOUT(window.roleText(), QStringLiteral("Role: active"), Deadline);
    // And it stays there: the dead node is not tried again while this one serves.
    const int before = window.snapshotCount();
    QTRY_VERIFY_WITH_TIMEOUT(window.snapshotCount() > before + 3, Deadline);
    QVERIFY2(window.identityText().endsWith(QStringLiteral(":%1").arg(adminPorts[1])),
             qPrintable(window.identityText()));
    delete others[0];
}

// Two brokers of their own (no shared database, so neither ever stands by) in one profile: the
// first one going away is a restart to wait for, not a takeover; the window must not move to
// the other broker, which has a window of its own already.
void tst_NodeFollow::independentBrokersStayPut()
{
    BrokerProcess first, second;
    const quint16 adminPorts[2] = {freePort(), freePort()};
    int i = 0;
    for (BrokerProcess *broker : {&first, &second}) {
        broker->set("admin.enabled", "true");
        broker->set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(adminPorts[i++]));
        QVERIFY2(broker->start(), broker->output().constData());
    }
    MainWindow window;
    window.session().setWatchIntervalMs(200);
    window.session().setReconnectDelayMs(300);
    window.show();
    const QList<MainWindow *> others = window.openProfile(
        ConnectionProfile{"two", {adminNode(adminPorts[0]), adminNode(adminPorts[1])}});
    QCOMPARE(others.size(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(window.roleText(), QStringLiteral("Role: active"), Deadline);
    QTRY_COMPARE_WITH_TIMEOUT(others[0]->roleText(), QStringLiteral("Role: active"), Deadline);

    first.kill();
    QTRY_VERIFY_WITH_TIMEOUT(window.session().state() == cmq::admingui::AdminSession::State::Reconnecting,
                             Deadline);
    // The other window's snapshots as the clock: 15 of them (3 s at 200 ms) span several of
    // this window's 300 ms reconnect attempts.
    const int before = others[0]->snapshotCount();
    QTRY_VERIFY_WITH_TIMEOUT(others[0]->snapshotCount() > before + 15, Deadline);
    QVERIFY2(window.identityText().endsWith(QStringLiteral(":%1").arg(adminPorts[0])),
             qPrintable(window.identityText()));
    delete others[0];
}

QTEST_MAIN(tst_NodeFollow)
#include "tst_nodefollow.moc"
