// A network partition between the active node and everything else (docs/OPERATIONS.md, High
// availability): the active broker runs in a network namespace of the test's own, joined to
// the host by one veth pair with two private addresses that exist only on that pair
// (10.213.N.1 on the host, 10.213.N.2 inside); PostgreSQL listens on loopback and on the host
// end. Mid-stream the link goes down: the other node takes over within the lease plus 5 s, and
// once the link is back the old node is a standby. Every ACKed message is delivered; none that
// got an error is. Needs root (or CAP_NET_ADMIN) for `ip netns`; skipped, saying so, without.

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

#include "brokerprocess.h"
#include "hatest.h"
#include "testpostgres.h"

using namespace cmq::test;

namespace {

constexpr int LeaseMs = 3000;

// Runs `ip ARGS...` (in the network namespace `inside` when given); the error text (empty on
// success). Inside a namespace through nsenter, not `ip -n`: that also remounts / and /sys,
// which fails in a chroot such as CI's fresh root ("mount --make-rslave /" failed).
QString ip(const QStringList &arguments, const QString &inside = {})
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    if (inside.isEmpty())
        process.start(QStringLiteral("ip"), arguments);
    else
        process.start(QStringLiteral("nsenter"),
                      QStringList{QStringLiteral("--net=/run/netns/") + inside,
                                  QStringLiteral("ip")} +
                          arguments);
    if (!process.waitForFinished(30000)) {
        process.kill();
        process.waitForFinished();
        return QStringLiteral("ip %1: timed out").arg(arguments.join(u' '));
    }
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0)
        return QStringLiteral("ip %1: %2")
            .arg(arguments.join(u' '), QString::fromLocal8Bit(process.readAll()).trimmed());
    return {};
}

// The namespace and its veth pair, removed on destruction whatever happened in between.
class Partitionable
{
public:
    Partitionable()
    {
        const qint64 pid = QCoreApplication::applicationPid();
        const QString tag = QString::number(pid % 100000);
        m_namespace = QStringLiteral("cmq36-") + tag;
        m_hostEnd = QStringLiteral("cmq36h") + tag;
        m_innerEnd = QStringLiteral("cmq36n") + tag;
        const int net = int(pid % 250) + 1;
        m_hostAddress = QStringLiteral("10.213.%1.1").arg(net);
        m_innerAddress = QStringLiteral("10.213.%1.2").arg(net);
        m_error = ip({"netns", "add", m_namespace});
        if (!m_error.isEmpty()) {
            m_canCreate = false;
            return;
        }
        m_created = true;
        const QList<QStringList> steps = {
            {"link", "add", m_hostEnd, "type", "veth", "peer", "name", m_innerEnd},
            {"link", "set", m_innerEnd, "netns", m_namespace},
            {"addr", "add", m_hostAddress + "/30", "dev", m_hostEnd},
            {"link", "set", m_hostEnd, "up"},
        };
        const QList<QStringList> inside = {
            {"addr", "add", m_innerAddress + "/30", "dev", m_innerEnd},
            {"link", "set", m_innerEnd, "up"},
            {"link", "set", "lo", "up"},
        };
        for (const QStringList &step : steps) {
            m_error = ip(step);
            if (!m_error.isEmpty())
                return;
        }
        for (const QStringList &step : inside) {
            m_error = ip(step, m_namespace);
            if (!m_error.isEmpty())
                return;
        }
    }
    ~Partitionable()
    {
        if (!m_created)
            return;
        (void)ip({"link", "del", m_hostEnd}); // also removes the inner end
        const QString error = ip({"netns", "del", m_namespace});
        if (!error.isEmpty())
            qWarning("%s", qPrintable(error));
    }

    bool canCreate() const { return m_canCreate; }
    QString error() const { return m_error; }
    QString name() const { return m_namespace; }
    QString hostAddress() const { return m_hostAddress; }
    QString innerAddress() const { return m_innerAddress; }
    QString cut() { return ip({"link", "set", m_hostEnd, "down"}); }
    QString restore() { return ip({"link", "set", m_hostEnd, "up"}); }

private:
    QString m_namespace, m_hostEnd, m_innerEnd, m_hostAddress, m_innerAddress, m_error;
    bool m_canCreate = true, m_created = false;
};

} // namespace

class tst_Partition : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void activeCutOffMidStream();
};

void tst_Partition::activeCutOffMidStream()
{
    Partitionable net;
    if (!net.canCreate())
        QSKIP(qPrintable(QStringLiteral("SKIPPED: network namespaces cannot be created here "
                                        "(needs root or CAP_NET_ADMIN): %1")
                             .arg(net.error())));
    QVERIFY2(net.error().isEmpty(), qPrintable(net.error()));

    // PostgreSQL on loopback and on the host end of the pair, which the namespace may use.
    qputenv(
        "PG_EXTRA",
        QStringLiteral("-c listen_addresses=127.0.0.1,%1").arg(net.hostAddress()).toLocal8Bit());
    PrivatePostgres pg;
    qunsetenv("PG_EXTRA");
    QVERIFY2(pg.isValid(), qPrintable(pg.error()));
    {
        QFile datadir(pg.directory() + QStringLiteral("/datadir"));
        QVERIFY(datadir.open(QIODevice::ReadOnly));
        QFile hba(QString::fromLocal8Bit(datadir.readAll().trimmed()) +
                  QStringLiteral("/pg_hba.conf"));
        QVERIFY2(hba.open(QIODevice::Append), qPrintable(hba.errorString()));
        hba.write(QStringLiteral("host all all %1/32 trust\n").arg(net.innerAddress()).toUtf8());
    }
    TestDatabase database(pg.server());
    QVERIFY2(database.isValid(), qPrintable(database.error()));
    {
        QSqlQuery reload(database.connection());
        QVERIFY2(reload.exec("SELECT pg_reload_conf()"), qPrintable(reload.lastError().text()));
    }

    BrokerProcess a, b;
    const HaNode nodeA(net.innerAddress(), a.port()), nodeB(b.port());
    for (BrokerProcess *node : {&a, &b}) {
        node->usePostgres(database);
        node->set("cluster.lease_ms", QString::number(LeaseMs));
        node->set("cluster.poll_ms", QString::number(LeaseMs / 10));
        node->set("performance.max_queue_size", "100000");
        // Restarting as a standby while cut off: keep trying until the link is back.
        node->set("database.connect_attempts", "1000");
        node->set("database.connect_retry_delay_ms", "500");
    }
    a.runInNetworkNamespace(net.name());
    a.set("server.address", '"' + QString::fromLatin1(nodeA.text()) + '"');
    a.set("database.host", '"' + net.hostAddress() + '"');
    a.set("cluster.node_id", "\"node-a\"");
    a.set("cluster.client_address", '"' + QString::fromLatin1(nodeA.text()) + '"');
    b.set("cluster.node_id", "\"node-b\"");
    b.set("cluster.client_address", '"' + QString::fromLatin1(nodeB.text()) + '"');
    QVERIFY2(a.start(), a.output().constData());
    QVERIFY2(b.start(), b.output().constData());
    QTRY_COMPARE_WITH_TIMEOUT(haGreeting(nodeB), haRedirectTo(nodeA), 30000);
    QVERIFY(haDeclare(nodeA, "receiver_1_part"));

    HaPublisher publisher({nodeA, nodeB}, "receiver_1_part", "part", 32, 2000);
    QVERIFY2(publisher.pump(60000, [&] { return publisher.acked().size() >= 300; }),
             "the stream did not get going");
    const qsizetype ackedBefore = publisher.acked().size();
    QVERIFY2(net.cut().isEmpty(), "cannot cut the link");
    QElapsedTimer cut;
    cut.start();
    QTRY_VERIFY_WITH_TIMEOUT(haServes(nodeB, "receiver_1_part"), 60000);
    const qint64 takeoverMs = cut.elapsed();
    qInfo("node b served %lld ms after the cut (the lease is %d ms)", takeoverMs, LeaseMs);
    QTRY_VERIFY2_WITH_TIMEOUT(b.output().contains("node node-b is active with epoch 2"),
                              b.output().constData(), 10000);
    // The publisher gives up on the silent link to a and carries on with b.
    QVERIFY2(publisher.pump(60000, [&] { return publisher.acked().size() >= ackedBefore + 300; }),
             b.output().constData());

    QVERIFY2(net.restore().isEmpty(), "cannot restore the link");
    QTRY_COMPARE_WITH_TIMEOUT(haGreeting(nodeA), haRedirectTo(nodeB), 90000);
    QVERIFY2(a.output().contains("stepping down"), a.output().constData());

    const QString wrong = haCheckDelivery(publisher, nodeB, "receiver_1_part", ackedBefore);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    // The bound: the lease, plus 5 s for noticing and recovering.
    QVERIFY2(takeoverMs <= LeaseMs + 5000,
             qPrintable(QStringLiteral("takeover after %1 ms").arg(takeoverMs)));
}

QTEST_GUILESS_MAIN(tst_Partition)
#include "tst_36_partition.moc"
