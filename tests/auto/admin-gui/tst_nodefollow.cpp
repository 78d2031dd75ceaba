// A profile over an active/standby pair on one PostgreSQL database (docs/ADMIN-GUI.md,
// "Profiles"): a standby with its admin listener enabled starts (it failed to, loading the
// audit trail from a database it had not opened), and the profile's first window, listed
// with the standby first, moves on to the active node by itself and shows its role. Then the
// roles as text on their own.

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
    void roleText();
    void firstWindowFollowsTheActive();
};

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
    QCoreApplication::setOrganizationName("CipherMQ-tests");
    QStandardPaths::setTestModeEnabled(true);
    TestDatabase database;
    QVERIFY2(database.isValid(), qPrintable(database.error()));
    BrokerProcess active, standby;
    quint16 adminPorts[2] = {freePort(), freePort()};
    int i = 0;
    for (BrokerProcess *node : {&active, &standby}) {
        node->usePostgres(database);
        node->set("cluster.node_id", i == 0 ? "\"a\"" : "\"b\"");
        node->set("cluster.client_address", QStringLiteral("\"127.0.0.1:%1\"").arg(node->port()));
        node->set("admin.enabled", "true");
        node->set("admin.address", QStringLiteral("\"127.0.0.1:%1\"").arg(adminPorts[i]));
        ++i;
    }
    QVERIFY2(active.start(), active.output().constData());
    QVERIFY2(standby.start(), standby.output().constData());

    const auto node = [](quint16 port) {
        ConnectionOptions o;
        o.host = "localhost";
        o.port = port;
        o.caPath = certFile("ca.crt");
        o.certPath = certFile("ops-admin.crt");
        o.keyPath = certFile("ops-admin.key");
        return o;
    };
    MainWindow window;
    window.session().setWatchIntervalMs(200);
    window.show();
    // The standby first: the first window finds it standing by and moves to the active.
    const QList<MainWindow *> others =
        window.openProfile(ConnectionProfile{"pair", {node(adminPorts[1]), node(adminPorts[0])}});
    QCOMPARE(others.size(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(window.roleText(), QStringLiteral("Role: active"), Deadline);
    QVERIFY2(window.identityText().endsWith(QStringLiteral(":%1").arg(adminPorts[0])),
             qPrintable(window.identityText()));
    // It stays with the active node.
    const int before = window.snapshotCount();
    QTRY_VERIFY_WITH_TIMEOUT(window.snapshotCount() > before + 3, Deadline);
    QCOMPARE(window.roleText(), QStringLiteral("Role: active"));
    delete others[0];
}

QTEST_MAIN(tst_NodeFollow)
#include "tst_nodefollow.moc"
